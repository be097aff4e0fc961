"""Record keys and partition paths must be the strings Apache Hudi's Java key generators produce."""

from __future__ import annotations

import datetime as dt
import decimal
import re

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError
from hudi_ds.keys.keygen import (
    integer_key_column,
    integer_keys,
    java_string_forms,
    key_generator_class,
    key_generator_type,
    record_key_strings,
)
from hudi_ds.keys.partition_path import (
    DEFAULT_PARTITION,
    MAX_SEGMENT_BYTES,
    escape_path_name,
    parse_partition_path,
    partition_path_strings,
    partition_value_matches,
    unescape_path_name,
)

# -- record keys -------------------------------------------------------------------------------------------------


def keys(table: pa.Table, fields: list[str], **kw: bool) -> list[str]:
    return record_key_strings(table, fields, **kw).to_pylist()


@pytest.mark.parametrize(
    "arr,expected",
    [
        (pa.array(["a", "b c", "é😀"]), ["a", "b c", "é😀"]),
        (pa.array(["x", "y"], pa.large_string()), ["x", "y"]),
        (pa.array([-128, 0, 127], pa.int8()), ["-128", "0", "127"]),
        (pa.array([-32768, 7], pa.int16()), ["-32768", "7"]),
        (pa.array([-(2**31), 2**31 - 1], pa.int32()), ["-2147483648", "2147483647"]),
        (pa.array([-(2**63), 2**63 - 1], pa.int64()), ["-9223372036854775808", "9223372036854775807"]),
        (pa.array([255], pa.uint8()), ["255"]),
        (pa.array([True, False]), ["true", "false"]),
        (pa.array([0, 19723, -1], pa.date32()), ["1970-01-01", "2024-01-01", "1969-12-31"]),
        (pa.array([86_400_000 * 19723], pa.date64()), ["2024-01-01"]),
        (pa.array([-719528, -719529, 2932897], pa.date32()), ["0000-01-01", "-0001-12-31", "+10000-01-01"]),
        (
            pa.array([decimal.Decimal("1.50"), decimal.Decimal("-3.00")], pa.decimal128(10, 2)),
            ["1.50", "-3.00"],
        ),
        (pa.array([decimal.Decimal("1E-7"), decimal.Decimal("0")], pa.decimal128(12, 7)), ["1E-7", "0E-7"]),
        (pa.array([decimal.Decimal("0.000001")], pa.decimal128(12, 7)), ["0.0000010"]),
        (pa.array(["k1", "k2", "k1"]).dictionary_encode(), ["k1", "k2", "k1"]),
    ],
)
def test_simple_key_string_forms(arr: pa.Array, expected: list[str]) -> None:
    assert keys(pa.table({"k": arr}), ["k"]) == expected
    assert record_key_strings(pa.table({"k": arr}), ["k"]).type == pa.string()


def java_big_decimal_to_string(unscaled: int, scale: int) -> str:
    """java.math.BigDecimal.toString as its Javadoc specifies it (scientific when scale < 0 or adjusted < -6)."""
    coeff = str(abs(unscaled))
    sign = "-" if unscaled < 0 else ""
    adjusted = -scale + len(coeff) - 1
    if scale >= 0 and adjusted >= -6:
        if scale == 0:
            body = coeff
        elif len(coeff) > scale:
            body = coeff[:-scale] + "." + coeff[-scale:]
        else:
            body = "0." + "0" * (scale - len(coeff)) + coeff
    else:
        body = coeff[0] + ("." + coeff[1:] if len(coeff) > 1 else "") + "E" + ("+" if adjusted > 0 else "")
        body += str(adjusted)
    return sign + body


@settings(max_examples=300, deadline=None)
@given(st.integers(-(10**18) + 1, 10**18 - 1), st.integers(0, 18))
def test_decimal_forms_follow_java_big_decimal(unscaled: int, scale: int) -> None:
    value = decimal.Decimal(unscaled).scaleb(-scale)
    arr = pa.array([value], pa.decimal128(38, scale))
    assert java_string_forms(arr, "d").to_pylist() == [java_big_decimal_to_string(unscaled, scale)]


@settings(max_examples=300, deadline=None)
@given(st.dates())
def test_date_forms_are_iso(day: dt.date) -> None:
    assert java_string_forms(pa.array([day], pa.date32()), "d").to_pylist() == [day.isoformat()]


def test_composite_keys_with_nulls_and_empties() -> None:
    table = pa.table(
        {
            "id": pa.array([1, None, 3, None], pa.int64()),
            "name": pa.array(["Alice", "Bob", "", None], pa.string()),
            "day": pa.array([0, 0, None, 1], pa.date32()),
        }
    )
    assert keys(table.slice(0, 3), ["id", "name"]) == [
        "id:1,name:Alice",
        "id:__null__,name:Bob",
        "id:3,name:__empty__",
    ]
    assert keys(table, ["id", "name", "day"]) == [
        "id:1,name:Alice,day:1970-01-01",
        "id:__null__,name:Bob,day:1970-01-01",
        "id:3,name:__empty__,day:__null__",
        "id:__null__,name:__null__,day:1970-01-02",
    ]
    # one field, prefixed form of 0.14.0 / 1.1 ComplexKeyGenerator
    assert keys(table.slice(0, 1), ["id"], single_field_prefixed=True) == ["id:1"]
    assert keys(table.slice(0, 1), ["id"]) == ["1"]


def test_null_simple_key_is_refused() -> None:
    table = pa.table({"uuid": pa.array(["a", None, "", None])})
    with pytest.raises(
        InvalidDataError, match=r"'uuid'.*null or empty in 3 row\(s\).*first rows \[1, 2, 3\]"
    ):
        record_key_strings(table, ["uuid"])


def test_all_null_composite_key_is_refused() -> None:
    table = pa.table({"a": pa.array([None, "x", ""]), "b": pa.array(["", None, None], pa.string())})
    with pytest.raises(InvalidDataError, match=r"\['a', 'b'\] are all null or empty in 2 row\(s\)"):
        record_key_strings(table, ["a", "b"])
    with pytest.raises(InvalidDataError, match="all null or empty in 1 row"):
        record_key_strings(table.slice(0, 1), ["a"], single_field_prefixed=True)


@pytest.mark.parametrize(
    "arr,type_name",
    [
        (pa.array([1.5]), "double"),
        (pa.array([1.5], pa.float32()), "float"),
        (pa.array([b"x"]), "binary"),
        (pa.array([dt.datetime(2024, 1, 1)]), "timestamp"),
        (pa.array([[1]]), "list"),
    ],
)
def test_unsupported_key_types(arr: pa.Array, type_name: str) -> None:
    with pytest.raises(
        InvalidDataError, match=rf"record key column 'k' has type {type_name}.*use a string or integer"
    ):
        record_key_strings(pa.table({"k": arr}), ["k"])


def test_missing_and_bad_key_fields() -> None:
    table = pa.table({"id": [1], "name": ["a"]})
    with pytest.raises(SchemaError, match=r"\['uuid'\] not found.*available columns: \['id', 'name'\]"):
        record_key_strings(table, ["id", "uuid"])
    with pytest.raises(ConfigError):
        record_key_strings(table, [])
    with pytest.raises(ConfigError, match="twice"):
        record_key_strings(table, ["id", "id"])


def test_key_generator_choice() -> None:
    ns = "org.apache.hudi.keygen."
    assert key_generator_class(["id"], ["city"]) == ns + "SimpleKeyGenerator"
    assert key_generator_class(["id", "name"], ["city"]) == ns + "ComplexKeyGenerator"
    assert key_generator_class(["id"], ["city", "day"]) == ns + "ComplexKeyGenerator"
    assert key_generator_class(["id"], []) == ns + "NonpartitionedKeyGenerator"
    assert key_generator_class(["id", "name"], []) == ns + "NonpartitionedKeyGenerator"
    assert key_generator_type(["id"], ["city"]) == "SIMPLE"
    assert key_generator_type(["id", "x"], ["city"]) == "COMPLEX"
    assert key_generator_type(["id"], []) == "NON_PARTITION"
    # no record key (generated keys): inferred from the partition fields alone, as KeyGenUtils does
    assert key_generator_type([], ["city"]) == "SIMPLE"
    assert key_generator_type([], ["city", "day"]) == "COMPLEX"
    assert key_generator_type([], []) == "NON_PARTITION"


# -- partition paths -------------------------------------------------------------------------------------------


def paths(table: pa.Table, fields: list[str], hive: bool, enc: bool = False) -> list[str]:
    return partition_path_strings(table, fields, hive, enc).to_pylist()


PT = pa.table(
    {
        "city": pa.array(["sf", None, "", "nyc"]),
        "day": pa.array([19723, 19724, None, 19723], pa.date32()),
        "n": pa.array([1, -2, 3, None], pa.int32()),
        "flag": pa.array([True, False, None, True]),
    }
)


def test_partition_paths_hive_and_plain() -> None:
    d = DEFAULT_PARTITION
    assert d == "__HIVE_DEFAULT_PARTITION__"
    assert paths(PT, ["city"], True) == ["city=sf", f"city={d}", f"city={d}", "city=nyc"]
    assert paths(PT, ["city"], False) == ["sf", d, d, "nyc"]
    assert paths(PT, ["city", "day"], True) == [
        "city=sf/day=2024-01-01",
        f"city={d}/day=2024-01-02",
        f"city={d}/day={d}",
        "city=nyc/day=2024-01-01",
    ]
    assert paths(PT, ["n", "flag"], False) == ["1/true", "-2/false", f"3/{d}", f"{d}/true"]
    assert paths(PT, [], True) == [""] * 4
    chunked = pa.Table.from_batches(PT.to_batches(max_chunksize=1))
    assert paths(chunked, ["day", "city"], False) == paths(PT, ["day", "city"], False)
    assert paths(PT.slice(0, 0), ["city"], True) == []


def test_partition_dictionary_column() -> None:
    table = pa.table({"c": pa.array(["b", "a", None, "b"]).dictionary_encode()})
    assert paths(table, ["c"], True) == ["c=b", "c=a", f"c={DEFAULT_PARTITION}", "c=b"]


@pytest.mark.parametrize("value", ["a/b", "..", ".", "x\\y", "nul\x00", "line\nbreak", "tab\t", "del\x7f"])
def test_unsafe_partition_values_refused_without_encoding(value: str) -> None:
    table = pa.table({"city": [value]})
    for hive in (True, False):
        with pytest.raises(InvalidDataError, match=r"partition column 'city' has the value") as info:
            partition_path_strings(table, ["city"], hive, False)
        assert repr(value) in str(info.value)
        if value not in (".", ".."):
            assert "urlencode=true" in str(info.value)


@pytest.mark.parametrize(
    "value,encoded",
    [
        ("a/b", "a%2Fb"),
        ("x\\y", "x%5Cy"),
        ("nul\x00", "nul%00"),
        ("50%", "50%25"),
        ("a=b:c", "a%3Db%3Ac"),
        ("é😀 ok", "é😀 ok"),
        ("a..b", "a..b"),
    ],
)
def test_encoded_partition_values(value: str, encoded: str) -> None:
    table = pa.table({"city": [value]})
    assert paths(table, ["city"], True, True) == [f"city={encoded}"]
    assert paths(table, ["city"], False, True) == [encoded]
    assert parse_partition_path(encoded, ["city"], False, True) == {"city": value}


@pytest.mark.parametrize("value", ["..", "."])
def test_dots_refused_even_with_encoding(value: str) -> None:
    with pytest.raises(InvalidDataError, match="parent folder"):
        partition_path_strings(pa.table({"city": [value]}), ["city"], False, True)


def test_leading_dot_refused_only_for_plain_style() -> None:
    table = pa.table({"city": [".hoodie"]})
    with pytest.raises(InvalidDataError, match="hidden folder"):
        partition_path_strings(table, ["city"], False, True)
    assert paths(table, ["city"], True) == ["city=.hoodie"]


def test_bad_partition_field_names() -> None:
    table = pa.table({"a/b": ["x"], "ok": ["y"]})
    with pytest.raises(ConfigError, match="rename the column"):
        partition_path_strings(table, ["a/b"], True, False)
    with pytest.raises(SchemaError, match=r"\['nope'\] not found.*available columns"):
        partition_path_strings(table, ["ok", "nope"], True, False)
    with pytest.raises(InvalidDataError, match="type double"):
        partition_path_strings(pa.table({"x": [1.5]}), ["x"], True, False)


def java_escape(value: str) -> str:
    """Independent model of Hive's FileUtils.escapePathName escape set."""
    specials = set("\"#%'*/:=?\\{[]^\x7f")
    out = []
    for ch in value:
        if ord(ch) < 0x20 or ch in specials:
            out.append("%" + format(ord(ch), "02X"))
        else:
            out.append(ch)
    return "".join(out)


@given(st.text(min_size=1))
def test_escape_matches_hive_and_round_trips(value: str) -> None:
    assert escape_path_name(value) == java_escape(value)
    assert unescape_path_name(escape_path_name(value)) == value
    assert "/" not in escape_path_name(value) and "\\" not in escape_path_name(value)


def test_unescape_java_quirks() -> None:
    assert unescape_path_name("%2") == "%2"
    assert unescape_path_name("a%zzb") == "a%zzb"
    assert unescape_path_name("%41%4a%4A") == "AJJ"
    assert unescape_path_name("%%41") == "%A"
    assert unescape_path_name("%+F") == "\x0f"  # Integer.parseInt("+F", 16)
    assert unescape_path_name("%-1") == "%-1"
    assert escape_path_name("") == DEFAULT_PARTITION


SAFE = st.text(
    alphabet=st.characters(codec="utf-8", exclude_categories=("Cc",), exclude_characters="/\\%"), min_size=1
).filter(lambda v: v not in (".", "..", DEFAULT_PARTITION) and not v.startswith(".")
         and not (len(v) == 2 and v[1] == ":" and v[0].isascii() and v[0].isalpha())  # a drive, refused
         and len(f"b={v}".encode()) <= MAX_SEGMENT_BYTES)  # longer segments are refused (tested elsewhere)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.tuples(SAFE, SAFE), min_size=1, max_size=5), st.booleans())
def test_parse_inverts_safe_paths(rows: list[tuple[str, str]], hive: bool) -> None:
    table = pa.table({"a": [r[0] for r in rows], "b": [r[1] for r in rows]})
    for p, row in zip(paths(table, ["a", "b"], hive), rows, strict=True):
        assert parse_partition_path(p, ["a", "b"], hive, False) == {"a": row[0], "b": row[1]}


@settings(max_examples=200, deadline=None)
@given(st.lists(st.text(alphabet=st.characters(codec="utf-8")), min_size=1, max_size=5))
def test_parse_inverts_encoded_arbitrary_text(values: list[str]) -> None:
    values = [v for v in values if v not in (".", "..") and len(f"k={escape_path_name(v)}".encode()) <= MAX_SEGMENT_BYTES]
    values = values or ["x"]
    table = pa.table({"k": values, "n": list(range(len(values)))})
    for p, v, i in zip(paths(table, ["k", "n"], True, True), values, range(len(values)), strict=True):
        assert ".." not in p.split("/") and p.count("/") == 1
        assert parse_partition_path(p, ["k", "n"], True, True) == {"k": v or None, "n": str(i)}


def test_parse_partition_path_edge_cases() -> None:
    assert parse_partition_path("city=sf", ["city"], True, False) == {"city": "sf"}
    assert parse_partition_path("city=a=b", ["city"], True, False) == {"city": "a=b"}
    assert parse_partition_path(f"city={DEFAULT_PARTITION}", ["city"], True, True) == {"city": None}
    assert parse_partition_path(DEFAULT_PARTITION, ["city"], False, False) == {"city": None}
    assert parse_partition_path("2024/01/05", ["day"], False, False) == {}  # timestamp key generator layout
    assert parse_partition_path("sf", ["city"], True, False) == {}
    assert parse_partition_path("town=sf", ["city"], True, False) == {}
    assert parse_partition_path("", [], False, False) == {}
    assert parse_partition_path("sf/1", ["city", "n"], False, False) == {"city": "sf", "n": "1"}


# -- pruning ---------------------------------------------------------------------------------------------------


def matches(path_value, op, literal, arrow_type, null_matches=False):
    return partition_value_matches(path_value, op, literal, arrow_type, null_matches=null_matches)


def test_partition_value_matches_int() -> None:
    t = pa.int32()
    assert matches("5", "=", 5, t)
    assert not matches("5", "=", 6, t)
    assert matches("5", "!=", 6, t)
    assert matches("10", ">", 9, t)  # numeric, not lexicographic
    assert not matches("10", "<", 9, t)
    assert matches("-2", "<=", -2, t)
    assert matches("5", "in", [1, 5], t)
    assert not matches("5", "not in", [1, 5], t)
    assert matches("5", "=", "5", t)  # string literal converted like the path value
    assert matches("x", "=", 5, t)  # unparsable -> cannot prune
    assert not matches(None, "=", 5, t)  # nulls never compare true
    assert not matches(None, "!=", 5, t)
    assert not matches(None, "not in", [5], t)
    assert matches(None, "not in", [5], t, null_matches=True)  # the caller's null rule keeps null rows
    assert matches("5", "like", 5, t)  # unknown op -> cannot prune


def test_partition_value_matches_string() -> None:
    t = pa.string()
    assert matches("sf", "=", "sf", t)
    assert not matches("sf", "=", "nyc", t)
    assert matches("b", ">=", "a", t)
    assert matches("sf", "not in", ["nyc"], t)
    # the default partition also holds "" for string columns
    assert matches(None, "=", "", t)
    assert matches(None, "!=", "x", t)
    assert not matches(None, "=", "x", t)
    assert matches("5", "=", 5, t)  # int literal vs string column: cannot tell -> True


def test_partition_value_matches_date_and_others() -> None:
    t = pa.date32()
    assert matches("2024-01-05", "=", dt.date(2024, 1, 5), t)
    assert not matches("2024-01-05", ">", dt.date(2024, 1, 5), t)
    assert matches("2024-01-05", "<", "2024-02-01", t)
    assert matches("2024-01-05", "=", dt.datetime(2024, 1, 5, 1), t)  # datetime: cannot prune
    assert matches("2024/01/05", "=", dt.date(2024, 1, 6), t)  # unparsable
    assert not matches(None, "=", dt.date(2024, 1, 5), t)
    assert matches("true", "=", True, pa.bool_())
    assert not matches("false", "=", True, pa.bool_())
    assert matches("1.50", "=", decimal.Decimal("1.5"), pa.decimal128(5, 2))
    assert matches("1.50", "=", 1.5, pa.decimal128(5, 2))  # float vs exact: no pruning
    assert matches("x", "=", 1, pa.timestamp("us"))


def test_partition_paths_of_many_rows_with_few_values() -> None:
    """Few distinct values over many rows (the path is rendered once per value); its speed is measured end to
    end by benchmarks/bench_core.py."""
    n = 200_000
    cities = np.array([f"city_{i}" for i in range(8)], dtype=object)
    table = pa.table({"city": pa.array(cities[np.arange(n) % 8]), "n": pa.array(np.arange(n) % 8)})
    out = partition_path_strings(table, ["city"], True, False)
    out2 = partition_path_strings(table, ["city", "n"], False, True)
    assert out[9].as_py() == "city=city_1" and out2[10].as_py() == "city_2/2"
    assert re.fullmatch(r"city_\d/\d", out2[n - 1].as_py())


@settings(max_examples=200, deadline=None)
@given(values=st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1), max_size=20),
       junk=st.lists(st.sampled_from(["007", "-0", "+5", "1e3", " 5", "5 ", "", "id:5", "9" * 20, "x"]), max_size=5),
       narrow=st.booleans())
def test_integer_keys_read_back_exactly_the_keys_an_integer_column_renders(values, junk, narrow):
    """Record keys of a bare integer key are its decimal digits (record_key_strings); integer_keys turns
    exactly those back into the values and drops every other string (no row of such a table has it)."""
    key_type = pa.int16() if narrow else pa.int64()
    rendered = record_key_strings(pa.table({"id": pa.array(values, pa.int64())}), ["id"]).to_pylist()
    keys = pa.array(junk + rendered, pa.string())
    got, positions = integer_keys(keys, key_type)
    expected = [(len(junk) + i, v) for i, v in enumerate(values) if not narrow or -(2**15) <= v < 2**15]
    assert list(zip(positions.tolist(), got.to_pylist(), strict=True)) == expected
    assert got.type == key_type


def test_integer_key_column_only_for_bare_integer_keys():
    schema = pa.schema([("id", pa.int64()), ("name", pa.string()), ("u", pa.uint64())])
    simple = "org.apache.hudi.keygen.SimpleKeyGenerator"
    assert integer_key_column(simple, ["id"], ["dt"], schema) == "id"
    assert integer_key_column(None, ["id"], [], schema) == "id"  # inferred: NonpartitionedKeyGenerator
    assert integer_key_column("SIMPLE", ["id"], ["dt"], schema) == "id"
    assert integer_key_column(simple, ["name"], ["dt"], schema) is None  # strings have placeholders
    assert integer_key_column(simple, ["u"], ["dt"], schema) is None
    assert integer_key_column("org.apache.hudi.keygen.ComplexKeyGenerator", ["id"], ["a", "b"], schema) is None
    assert integer_key_column(None, ["id", "name"], ["dt"], schema) is None
    assert integer_key_column("org.apache.hudi.keygen.TimestampBasedKeyGenerator", ["id"], ["dt"], schema) is None


@settings(max_examples=300, deadline=None)
@given(st.text(max_size=30), st.integers(0, 10**15), st.integers(0, 25_000) | st.sampled_from([0, 1, 9_999, 10_001]))
def test_numbered_strings_are_the_prefix_and_each_number(prefix, first, n):
    """`_hoodie_commit_seqno` and generated keys: built from runs of fixed-size records, they must equal the
    plain formatting across every digit-length and high-digit boundary."""
    from hudi_ds.schema.strings import numbered_strings

    got = numbered_strings(prefix, first, n)
    assert got.type == pa.string() and got.validate(full=True) is None
    assert got.to_pylist() == [f"{prefix}{i}" for i in range(first, first + n)]


def test_numbered_strings_cross_every_boundary():
    from hudi_ds.schema.strings import numbered_strings

    for first, n in ((0, 120_000), (9_995, 10), (99_999_990, 20), (10**12 - 3, 6)):
        assert numbered_strings("2026_0_", first, n).to_pylist() == [f"2026_0_{i}" for i in range(first, first + n)]


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=90), st.integers(0, 3_000) | st.sampled_from([65_535, 65_536, 100_001, 1 << 20]))
def test_constant_strings_repeat_the_value(value, n):
    """Meta and partition columns of one value: filled by doubling copies in Arrow's pool once they are large,
    they must equal the value written n times on both sides of that size."""
    from hudi_ds.schema.strings import constant_strings

    got = constant_strings(value, n)
    assert got.type == pa.string() and got.validate(full=True) is None and len(got) == n
    assert got.equals(pa.array([value] * n, pa.string()))
