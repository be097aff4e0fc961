"""Partition paths as Hudi's key generators build them, made safe, and their inverse for pruning.

Java (KeyGenUtils.getRecordPartitionPath / getPartitionPath, 0.14+): a null or empty value becomes
``__HIVE_DEFAULT_PARTITION__`` in both hive and non-hive style (the pre-0.12 ``default`` is only read, never
written); otherwise the value's string form, escaped with PartitionPathEncodeUtils.escapePathName when
``hoodie.datasource.write.partitionpath.urlencode`` is on; hive style prefixes ``field=``; fields are joined
by ``/``.

Safety (stricter than Java, whose recent releases only refuse ``..`` segments): a value must never let a file land outside
the table folder or inside ``.hoodie``. Without url-encoding, values containing ``/``, ``\\`` or control
characters are refused; ``.`` and ``..`` are refused in every mode (escaping keeps dots); in non-hive style a
value may not start with ``.`` either (it would create a hidden folder such as ``.hoodie``), nor be a letter and
``:`` alone without url-encoding (a drive: ``a:/x`` is absolute on Windows; ``a:b`` is a plain folder).
"""

from __future__ import annotations

import datetime as _dt
import decimal
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError
from hudi_ds.keys.keygen import java_string_forms
from hudi_ds.keys.timestamp_partition import TimestampPartition

DEFAULT_PARTITION = "__HIVE_DEFAULT_PARTITION__"
MAX_SEGMENT_BYTES = 255  # NAME_MAX of Linux file systems; S3 keys allow more, but the table must stay portable

# Hive's FileUtils escape set, as copied into Hudi's PartitionPathEncodeUtils: ASCII controls, DEL and these.
_ESCAPED = [chr(c) for c in range(0x20)] + list("\"#%'*/:=?\\\x7f{[]^")
_ESCAPE_TABLE = str.maketrans({c: f"%{ord(c):02X}" for c in _ESCAPED})
_UNSAFE_RAW = re.compile(r"[/\\\x00-\x1f\x7f]")
_HEX1 = set("0123456789abcdefABCDEF")
_DRIVE = re.compile(r"[A-Za-z]:")  # fullmatch: a value 'a:b' is a folder, 'a:' a drive (storage.require_inside)


def escape_path_name(value: str) -> str:
    """PartitionPathEncodeUtils.escapePathName: ``%XX`` (upper-case hex) for Hive's escape set, "" -> default."""
    if value == "":
        return DEFAULT_PARTITION
    return value.translate(_ESCAPE_TABLE)


def _java_hex2(text: str) -> int:
    """Integer.parseInt(text, 16) for a 2-char text, -1 where Java would throw."""
    if text[0] in "+-":
        if text[1] not in _HEX1:
            return -1
        value = int(text[1], 16)
        return -value if text[0] == "-" else value
    if text[0] in _HEX1 and text[1] in _HEX1:
        return int(text, 16)
    return -1


def unescape_path_name(value: str) -> str:
    """PartitionPathEncodeUtils.unescapePathName: decodes ``%XX``, leaves malformed escapes as they are."""
    if "%" not in value:
        return value
    out: list[str] = []
    i, n = 0, len(value)
    while i < n:
        c = value[i]
        if c == "%" and i + 2 < n:
            code = _java_hex2(value[i + 1 : i + 3])
            if code >= 0:
                out.append(chr(code))
                i += 3
                continue
        out.append(c)
        i += 1
    return "".join(out)


def _check_field_name(field: str) -> None:
    if not field or field.startswith(".") or _UNSAFE_RAW.search(field) or "=" in field:
        raise ConfigError(
            f"partition field name {field!r} cannot be used in a folder name (empty, leading '.', '/', '\\', "
            "'=' or control characters); rename the column"
        )


def _segment(field: str, value: str | None, hive_style: bool, url_encode: bool) -> str:
    """One path segment for one distinct value, refusing anything that could escape the table folder."""
    if value is None or value == "":
        text = DEFAULT_PARTITION
    else:
        if value in (".", ".."):
            raise InvalidDataError(
                f"partition column {field!r} has the value {value!r}, which would name the current or parent "
                "folder and let files land outside the table; change or drop those rows"
            )
        if not url_encode and _UNSAFE_RAW.search(value):
            raise InvalidDataError(
                f"partition column {field!r} has the value {value!r} containing '/', '\\' or a control "
                "character, which would create extra folders; create the table with url-encoded partition "
                "paths (hoodie.datasource.write.partitionpath.urlencode=true) or clean the values"
            )
        text = escape_path_name(value) if url_encode else value
        if not hive_style and _DRIVE.fullmatch(text):
            raise InvalidDataError(
                f"partition column {field!r} has the value {value!r}, a folder named like a drive ('C:/...' is an "
                "absolute path on Windows, and Hadoop's and Hudi's paths parse 'C:' as a URI scheme); use url-encoded "
                "(hoodie.datasource.write.partitionpath.urlencode=true) or hive-style partition paths")
        if not hive_style and text.startswith("."):
            raise InvalidDataError(
                f"partition column {field!r} has the value {value!r} starting with '.', which would create a "
                "hidden folder (e.g. '.hoodie') that Hudi readers skip; use hive-style partitioning or change "
                "the values"
            )
    segment = f"{field}={text}" if hive_style else text
    if len(segment.encode("utf-8")) > MAX_SEGMENT_BYTES:
        raise InvalidDataError(
            f"partition column {field!r} has a value whose folder name ({segment[:40]!r}...) would exceed the "
            f"{MAX_SEGMENT_BYTES} bytes file systems and object stores allow; partition by a shorter column (or "
            "a prefix of this one)")
    return segment


def _timestamp_segment(field: str, text: str, hive_style: bool, url_encode: bool) -> str:
    """The path of a timestamp-based partition value: its pattern may make several folders ('yyyy/MM/dd'), whose
    text comes from the table's own settings, checked by hudi_ds.keys.timestamp_partition."""
    if url_encode:
        text = escape_path_name(text)
    if any(part in ("", ".", "..") or part.startswith(".") for part in text.split("/")) or "\\" in text:
        raise InvalidDataError(
            f"the timestamp-based partition of column {field!r} formats as {text!r}, which would make an empty, "
            "hidden or parent folder; change hoodie.keygen.timebased.output.dateformat")
    return f"{field}={text}" if hive_style else text


def _encode_field(
    table: pa.Table, field: str, hive_style: bool, url_encode: bool, timestamp: TimestampPartition | None = None,
) -> tuple[np.ndarray, list[str]]:
    """Dictionary-encode one partition column: per-row codes and the segment of each code."""
    col = table.column(field)
    if timestamp is not None:
        enc = pc.dictionary_encode(timestamp.values(col, field))
        segments = [_timestamp_segment(field, v, hive_style, url_encode) for v in enc.dictionary.to_pylist()]
        return enc.indices.to_numpy(zero_copy_only=False).astype(np.int64), segments
    arr = col.combine_chunks() if col.num_chunks != 1 else col.chunk(0)
    if not pa.types.is_dictionary(arr.type):
        arr = pc.dictionary_encode(arr)
    forms = java_string_forms(arr.dictionary, field, "partition").to_pylist()
    segments = [_segment(field, v, hive_style, url_encode) for v in forms]
    segments.append(_segment(field, None, hive_style, url_encode))
    codes = pc.fill_null(arr.indices, len(forms)).to_numpy(zero_copy_only=False).astype(np.int64)
    return codes, segments


def partition_path_strings(
    table: pa.Table, partition_fields: Sequence[str], hive_style: bool, url_encode: bool,
    timestamps: Mapping[str, TimestampPartition] | None = None,
) -> pa.Array:
    """``_hoodie_partition_path`` for every row (pa.string()); string forms are built once per distinct value.
    `timestamps`: the fields whose values a timestamp-based key generator formats (hudi_ds.keys.partition_scheme)."""
    return partition_paths(table, partition_fields, hive_style, url_encode, timestamps).dictionary_decode()


def partition_paths(
    table: pa.Table, partition_fields: Sequence[str], hive_style: bool, url_encode: bool,
    timestamps: Mapping[str, TimestampPartition] | None = None,
) -> pa.DictionaryArray:
    """partition_path_strings as a dictionary of distinct paths: a write groups its rows by the codes, without
    building (and hashing again) a string per row."""
    timestamps = timestamps or {}
    n = table.num_rows
    if not partition_fields:
        return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([""], pa.string()))
    missing = [f for f in partition_fields if f not in table.column_names]
    if missing:
        raise SchemaError(
            f"partition column(s) {missing} not found in the input; available columns: {table.column_names}; "
            "add the column(s) or fix the partition field setting"
        )
    if len(set(partition_fields)) != len(partition_fields):
        raise ConfigError(f"partition fields {list(partition_fields)} name a column twice; list each once")
    for f in partition_fields:
        if hive_style:
            _check_field_name(f)
    first = partition_fields[0]
    codes, paths = _encode_field(table, first, hive_style, url_encode, timestamps.get(first))
    for field in partition_fields[1:]:
        more_codes, segments = _encode_field(table, field, hive_style, url_encode, timestamps.get(field))
        # Re-factorize after each field so the combined code stays below rows x distinct values.
        enc = pc.dictionary_encode(pa.array(codes * len(segments) + more_codes))
        paths = [
            paths[k // len(segments)] + "/" + segments[k % len(segments)]
            for k in enc.dictionary.to_numpy().tolist()
        ]
        codes = enc.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    distinct = pc.dictionary_encode(pa.array(paths, pa.string()))  # two values may make one path
    remap = distinct.indices.to_numpy(zero_copy_only=False).astype(np.int32)
    return pa.DictionaryArray.from_arrays(pa.array(remap[codes]), distinct.dictionary)


def parse_partition_path(
    path: str, partition_fields: Sequence[str], hive_style: bool, url_encode: bool
) -> dict[str, str | None]:
    """Field -> value string (None for the default partition), or {} when the path does not have one segment
    per field (e.g. timestamp key generators writing ``yyyy/MM/dd``): the caller then skips path pruning."""
    if not partition_fields:
        return {}
    segments = path.split("/")
    if len(segments) != len(partition_fields):
        return {}
    out: dict[str, str | None] = {}
    for field, seg in zip(partition_fields, segments, strict=True):
        if hive_style:
            name, sep, text = seg.partition("=")
            if not sep or name != field:
                return {}
        else:
            text = seg
        if text == DEFAULT_PARTITION:
            out[field] = None
        else:
            out[field] = unescape_path_name(text) if url_encode else text
    return out


def _converter(arrow_type: pa.DataType) -> Callable[[str], Any] | None:
    t = arrow_type
    if pa.types.is_dictionary(t):
        t = t.value_type
    if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return str
    if pa.types.is_integer(t):
        return int
    if pa.types.is_boolean(t):
        return lambda s: {"true": True, "false": False}[s]
    if pa.types.is_date(t):
        return _dt.date.fromisoformat
    if pa.types.is_decimal(t):
        return decimal.Decimal
    if pa.types.is_floating(t):
        return float
    return None


def _compare(value: Any, op: str, literal: Any, convert: Callable[[str], Any]) -> bool:
    """Python comparison; the literal is converted like the path value when the types do not compare."""

    def cmp1(lit: Any) -> bool:
        try:
            return _apply(value, op, lit)
        except TypeError:
            if not isinstance(lit, str):
                raise
            return _apply(value, op, convert(lit))

    if op in ("in", "not in"):
        members = list(literal)
        hit = any(_compare(value, "=", m, convert) for m in members)
        return hit if op == "in" else not hit
    return cmp1(literal)


def _apply(value: Any, op: str, lit: Any) -> bool:
    if isinstance(lit, str) != isinstance(value, str):
        raise TypeError("string vs non-string")
    if isinstance(lit, float) and not isinstance(value, float | int):
        raise TypeError("float literal against an exact type")
    if isinstance(lit, _dt.datetime) and not isinstance(value, _dt.datetime):
        raise TypeError("datetime literal against a date")
    if op in ("=", "=="):
        return bool(value == lit)
    if op == "!=":
        return bool(value != lit)
    if op == "<":
        return bool(value < lit)
    if op == "<=":
        return bool(value <= lit)
    if op == ">":
        return bool(value > lit)
    if op == ">=":
        return bool(value >= lit)
    raise ValueError(op)


def partition_value_matches(path_value: str | None, op: str, literal: Any, arrow_type: pa.DataType, *,
                            null_matches: bool) -> bool:
    """Whether rows of a partition whose path holds ``path_value`` may satisfy ``column <op> literal``.

    False only when no row can match; any doubt (unknown op or type, unparsable value) gives True. The default
    partition (``path_value`` None) holds nulls, which match as the caller's null rule says (`null_matches`,
    hudi_ds.read.filters owns it), and, for string columns, empty strings and the text of its own name.
    """
    if path_value is None and null_matches:
        return True
    convert = _converter(arrow_type)
    if convert is None or op not in ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in"):
        return True
    try:
        if path_value is None:
            if convert is not str:
                return False
            return _compare("", op, literal, convert) or _compare(DEFAULT_PARTITION, op, literal, convert)
        return _compare(convert(path_value), op, literal, convert)
    except (ValueError, TypeError, KeyError, ArithmeticError, decimal.InvalidOperation):
        return True
