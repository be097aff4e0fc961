"""Record keys exactly as Apache Hudi's built-in key generators build them, vectorized with pyarrow.

Java renders each key field through ``HoodieAvroUtils.getNestedFieldValAsString``: ints as decimal digits,
booleans as ``true``/``false``, Avro ``date`` as ``LocalDate.toString()`` (``yyyy-MM-dd``, not epoch days), and
decimals as ``BigDecimal.toString()``. The Spark row-writer path renders dates and decimals the same way.
Types whose Java rendering differs between write paths or JVM versions (float/double, timestamps, binary,
nested) are refused rather than guessed.

* SimpleKeyGenerator / NonpartitionedKeyGenerator with one key field: the bare value; null or ``""`` is an error.
* ComplexKeyGenerator (and NonpartitionedKeyGenerator with several fields): ``f1:v1,f2:v2`` with ``__null__``
  for null and ``__empty__`` for ``""``; a key whose fields are all null/empty is an error.
* ComplexKeyGenerator with ONE key field (only chosen when there are several partition fields) is
  version-dependent: 0.14.0 and 1.1 (``FIELD_PREFIXED``) write ``f1:v1``; 0.14.1, 0.15.x and 1.0.0-1.0.2 write the
  bare value (HUDI-7001). ``single_field_prefixed`` selects the form.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError

NULL_PLACEHOLDER = "__null__"
EMPTY_PLACEHOLDER = "__empty__"

_KEYGEN_PACKAGE = "org.apache.hudi.keygen."
_CLASS_BY_TYPE = {
    "SIMPLE": _KEYGEN_PACKAGE + "SimpleKeyGenerator",
    "COMPLEX": _KEYGEN_PACKAGE + "ComplexKeyGenerator",
    "NON_PARTITION": _KEYGEN_PACKAGE + "NonpartitionedKeyGenerator",
}

# date32 range that Arrow formats exactly like java.time.LocalDate.toString() (years 0001..9999).
_MIN_PLAIN_DAY = -719162  # 0001-01-01
_MAX_PLAIN_DAY = 2932896  # 9999-12-31


def key_generator_type(key_fields: Sequence[str], partition_fields: Sequence[str]) -> str:
    """The 1.x ``hoodie.table.keygenerator.type`` Spark infers (KeyGenUtils.inferKeyGeneratorType).

    0.14/0.15 and 1.x agree: no partition field -> NON_PARTITION; one partition field and at most one key field
    -> SIMPLE (no key field: a table whose keys are generated, which infers from the partition fields alone);
    anything else -> COMPLEX.
    """
    if not partition_fields:
        return "NON_PARTITION"
    if len(partition_fields) == 1 and len(key_fields) <= 1:
        return "SIMPLE"
    return "COMPLEX"


def key_generator_class(key_fields: Sequence[str], partition_fields: Sequence[str]) -> str:
    """The ``hoodie.table.keygenerator.class`` Spark 0.14/0.15 writes for these fields."""
    return _CLASS_BY_TYPE[key_generator_type(key_fields, partition_fields)]


def _java_local_date(days: int) -> str:
    """java.time.LocalDate.ofEpochDay(days).toString() for any year (proleptic Gregorian)."""
    z = days + 719468
    era = z // 146097  # floor division (the C formula adjusts for truncation instead)
    doe = z - era * 146097
    yoe = (doe - doe // 1460 + doe // 36524 - doe // 146096) // 365
    doy = doe - (365 * yoe + yoe // 4 - yoe // 100)
    mp = (5 * doy + 2) // 153
    day = doy - (153 * mp + 2) // 5 + 1
    month = mp + 3 if mp < 10 else mp - 9
    year = yoe + era * 400 + (1 if month <= 2 else 0)
    if abs(year) < 1000:
        year_str = ("-" if year < 0 else "") + f"{abs(year):04d}"
    else:
        year_str = ("+" if year > 9999 else "") + str(year)
    return f"{year_str}-{month:02d}-{day:02d}"


def _date_strings(arr: pa.Array) -> pa.Array:
    days_arr = arr if pa.types.is_date32(arr.type) else pc.cast(arr, pa.date32())
    out = pc.cast(days_arr, pa.string())
    days = pc.fill_null(days_arr.cast(pa.int32()), 0).to_numpy(zero_copy_only=False)
    odd = np.flatnonzero((days < _MIN_PLAIN_DAY) | (days > _MAX_PLAIN_DAY))
    if len(odd) == 0:
        return out
    values = out.to_pylist()
    for i in odd:
        values[i] = _java_local_date(int(days[i]))
    return pa.array(values, pa.string())


def java_string_forms(arr: pa.Array | pa.ChunkedArray, column: str, role: str = "record key") -> pa.Array:
    """Each value as Java's String.valueOf renders it for a Hudi key; nulls stay null.

    ``role`` only words the error ("record key" or "partition").
    """
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    t = arr.type
    if pa.types.is_dictionary(t):
        return java_string_forms(arr.dictionary_decode(), column, role)
    if pa.types.is_string(t):
        return arr
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pc.cast(arr, pa.string())
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return pc.cast(arr, pa.string())
    if pa.types.is_decimal(t):
        # Arrow's decimal formatting follows java.math.BigDecimal.toString (incl. "1E-7" / "1.2E+3").
        return pc.cast(arr, pa.string())
    if pa.types.is_date(t):
        return _date_strings(arr)
    if role == "partition":
        fix = "use a string, integer, boolean, date or decimal column"
    else:
        fix = "use a string or integer column"
    raise InvalidDataError(
        f"{role} column {column!r} has type {t}; Java renders such values differently across write paths, "
        f"so hudi_ds cannot build {role} values Spark/Flink would agree with; {fix}"
    )


def _columns(table: pa.Table, fields: Sequence[str], role: str) -> list[pa.Array]:
    if not fields:
        raise ConfigError(f"no {role} field given; name at least one column")
    if len(set(fields)) != len(fields):
        raise ConfigError(f"{role} fields {list(fields)} name a column twice; list each column once")
    missing = [f for f in fields if f not in table.column_names]
    if missing:
        raise SchemaError(
            f"{role} column(s) {missing} not found in the input; available columns: {table.column_names}; "
            f"add the column(s) or fix the {role} field setting"
        )
    return [java_string_forms(table.column(f), f, role) for f in fields]


def _first_rows(mask: np.ndarray, limit: int = 5) -> list[int]:
    return [int(i) for i in np.flatnonzero(mask)[:limit]]


def record_key_strings(
    table: pa.Table, key_fields: Sequence[str], *, single_field_prefixed: bool = False
) -> pa.Array:
    """The record key meta column of every row (pa.string()).

    One field: the bare value (Simple/Nonpartitioned key generators); with ``single_field_prefixed`` the
    ``field:value`` form of 0.14.0 / 1.1 ComplexKeyGenerator. Several fields: ``f1:v1,f2:v2``.
    """
    values = _columns(table, key_fields, "record key")
    if len(values) == 1 and not single_field_prefixed:
        v = values[0]
        bad = np.asarray(pc.fill_null(pc.equal(v, ""), True).to_numpy(zero_copy_only=False), dtype=bool)
        if bad.any():
            raise InvalidDataError(
                f"record key column {key_fields[0]!r} is null or empty in {int(bad.sum())} row(s) "
                f"(first rows {_first_rows(bad)}); every row needs a non-empty record key: fill or drop those rows"
            )
        return v
    parts: list[pa.Array | pa.Scalar] = []
    all_blank: np.ndarray | None = None
    for i, (name, v) in enumerate(zip(key_fields, values, strict=True)):
        is_null = pc.is_null(v)
        is_empty = pc.fill_null(pc.equal(v, ""), False)
        blank = np.asarray(pc.or_(is_null, is_empty).to_numpy(zero_copy_only=False), dtype=bool)
        all_blank = blank if all_blank is None else (all_blank & blank)
        encoded = pc.if_else(is_null, NULL_PLACEHOLDER, pc.if_else(is_empty, EMPTY_PLACEHOLDER, v))
        parts.append(pa.scalar(("," if i else "") + name + ":", pa.string()))
        parts.append(encoded)
    assert all_blank is not None
    if all_blank.any():
        raise InvalidDataError(
            f"record key columns {list(key_fields)} are all null or empty in {int(all_blank.sum())} row(s) "
            f"(first rows {_first_rows(all_blank)}); at least one key column must have a value: fill or drop "
            "those rows"
        )
    joined = pc.binary_join_element_wise(*parts, "")
    if isinstance(joined, pa.ChunkedArray):
        joined = joined.combine_chunks()
    return joined


def integer_key_column(key_generator: str | None, key_fields: Sequence[str], partition_fields: Sequence[str],
                       schema: pa.Schema) -> str | None:
    """The integer data column whose values are the record keys one to one, or None.

    Simple and Nonpartitioned key generators with one key field write the bare value as the record key, and
    an integer renders as its decimal digits only: matching records by the integer column is matching them
    by key, without decoding (or hashing) the key strings."""
    if len(key_fields) != 1 or key_fields[0] not in schema.names:
        return None
    kg = key_generator or _CLASS_BY_TYPE[key_generator_type(key_fields, partition_fields)]
    bare = kg.rsplit(".", 1)[-1].upper() in ("SIMPLEKEYGENERATOR", "NONPARTITIONEDKEYGENERATOR", "SIMPLE",
                                            "NON_PARTITION")
    return key_fields[0] if bare and pa.types.is_signed_integer(schema.field(key_fields[0]).type) else None


def integer_keys(keys: pa.Array, key_type: pa.DataType) -> tuple[pa.Array, np.ndarray]:
    """Record key strings as values of an integer key column (see integer_key_column), and the positions in
    `keys` they come from: a string other than an integer's decimal digits is no key of such a table."""
    digits = pc.fill_null(pc.match_substring_regex(keys, r"^(0|-?[1-9][0-9]{0,18})$"), False)
    candidates = keys.filter(digits)
    try:
        parsed = pc.cast(candidates, pa.int64())
    except pa.ArrowInvalid:  # 19 digits beyond int64's range
        parsed = pa.array([v if -2**63 <= v < 2**63 else None for v in map(int, candidates.to_pylist())],
                          pa.int64())
    info = np.iinfo(key_type.to_pandas_dtype())
    fits = pc.fill_null(pc.and_(pc.greater_equal(parsed, info.min), pc.less_equal(parsed, info.max)), False)
    positions = np.flatnonzero(digits.to_numpy(zero_copy_only=False))[fits.to_numpy(zero_copy_only=False)]
    return pc.cast(parsed.filter(fits), key_type), positions
