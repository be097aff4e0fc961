"""Arrow <-> Avro schema conversion (hudi_ds.schema.avro) and meta-column helpers (hudi_ds.schema.meta)."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import os
import re
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_ds.errors import SchemaError
from hudi_ds.log import read_blocks
from hudi_ds.schema import (
    META_COLUMNS,
    META_SCHEMA,
    OPERATION_COLUMN,
    arrow_to_avro,
    arrow_to_avro_records,
    avro_records_to_arrow,
    avro_to_arrow,
    decimal_fixed_size,
    fit_table,
    sanitize_name,
    strip_meta,
    with_meta,
)

# ------------------------------------------------------------------------------------------ strategies

_LEAVES = [
    pa.string(), pa.large_string(), pa.bool_(), pa.int8(), pa.int16(), pa.int32(), pa.int64(), pa.uint8(),
    pa.uint16(), pa.uint32(), pa.float32(), pa.float64(), pa.binary(), pa.large_binary(), pa.date32(),
    pa.date64(), pa.time32("s"), pa.time32("ms"), pa.time64("us"), pa.time64("ns"),
    *[pa.timestamp(u, tz=tz) for u in ("s", "ms", "us", "ns") for tz in (None, "UTC")],
]
_NAMES = st.from_regex(r"[A-Za-z_][A-Za-z0-9_]{0,8}", fullmatch=True)


@st.composite
def _decimals(draw: st.DrawFn) -> pa.DataType:
    precision = draw(st.integers(1, 38))
    return pa.decimal128(precision, draw(st.integers(0, precision)))


def _structs(children: st.SearchStrategy[pa.DataType]) -> st.SearchStrategy[pa.DataType]:
    return st.lists(st.tuples(_NAMES, children), min_size=1, max_size=4, unique_by=lambda p: p[0]).map(
        lambda pairs: pa.struct([pa.field(n, t) for n, t in pairs]))


arrow_types = st.recursive(
    st.sampled_from(_LEAVES) | _decimals(),
    lambda children: st.one_of(
        children.map(pa.list_), children.map(pa.large_list),
        children.map(lambda t: pa.map_(pa.string(), t)), _structs(children)),
    max_leaves=8,
)
_named_types = st.lists(st.tuples(_NAMES, arrow_types), min_size=1, max_size=6, unique_by=lambda p: p[0])
arrow_schemas = _named_types.map(lambda pairs: pa.schema([pa.field(n, t) for n, t in pairs]))


def normalized(t: pa.DataType) -> pa.DataType:
    """The Arrow type an Arrow type comes back as after a trip through Avro (all fields nullable)."""
    pt = pa.types
    if pt.is_large_string(t):
        return pa.string()
    if pt.is_large_binary(t):
        return pa.binary()
    if pt.is_int8(t) or pt.is_int16(t) or pt.is_uint8(t) or pt.is_uint16(t):
        return pa.int32()
    if pt.is_uint32(t):
        return pa.int64()
    if pt.is_date64(t):
        return pa.date32()
    if pt.is_time32(t):
        return pa.time32("ms")
    if pt.is_time64(t):
        return pa.time64("us")
    if pt.is_timestamp(t):
        return pa.timestamp("ms" if t.unit in ("s", "ms") else "us", tz="UTC" if t.tz else None)
    if pt.is_list(t) or pt.is_large_list(t):
        return pa.list_(pa.field("item", normalized(t.value_type)))
    if pt.is_map(t):
        return pa.map_(pa.string(), pa.field("value", normalized(t.item_type)))
    if pt.is_struct(t):
        return pa.struct([pa.field(f.name, normalized(f.type)) for f in t])
    return t


# ------------------------------------------------------------------------------------------ arrow -> avro


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(arrow_schemas)
def test_arrow_avro_round_trip(schema: pa.Schema) -> None:
    avro = arrow_to_avro(schema, "my_table")
    fastavro.parse_schema(json.loads(json.dumps(avro)))  # valid Avro, unique names, JSON-serialisable
    expected = pa.schema([pa.field(f.name, normalized(f.type)) for f in schema])
    assert avro_to_arrow(avro).equals(expected)
    assert avro_to_arrow(json.dumps(avro)).equals(expected)


def test_arrow_to_avro_follows_hudi_conventions() -> None:
    schema = pa.schema([("ts", pa.int64()), ("amount", pa.decimal128(15, 2)),
                        ("s", pa.struct([("d", pa.decimal128(10, 5))])),
                        ("when", pa.timestamp("ns", tz="UTC")), ("local", pa.timestamp("ms"))])
    avro = arrow_to_avro(schema, "v6-trips")
    assert avro["name"] == "v6__trips_record" and avro["namespace"] == "hoodie.v6__trips"
    fields = {f["name"]: f for f in avro["fields"]}
    assert fields["ts"] == {"name": "ts", "type": ["null", "long"], "default": None}
    amount = fields["amount"]["type"][1]
    assert amount == {"type": "fixed", "name": "fixed",
                      "namespace": "hoodie.v6__trips.v6__trips_record.amount",
                      "size": 7, "logicalType": "decimal", "precision": 15, "scale": 2}
    nested = fields["s"]["type"][1]
    assert (nested["name"], nested["namespace"]) == ("s", "hoodie.v6__trips.v6__trips_record")
    assert fields["when"]["type"][1] == {"type": "long", "logicalType": "timestamp-micros"}
    assert fields["local"]["type"][1] == {"type": "long", "logicalType": "local-timestamp-millis"}


def test_decimal_fixed_size_matches_spark() -> None:
    # Spark's minBytesForPrecision; 10 -> 5 and 15 -> 7 are in the reference tables' schemas
    assert [decimal_fixed_size(p) for p in (1, 2, 3, 9, 10, 15, 18, 19, 38)] == [1, 1, 2, 4, 5, 7, 8, 9, 16]


def test_sanitize_name_like_hudi() -> None:
    assert sanitize_name("trips") == "trips"
    assert sanitize_name("my-table") == "my__table"
    assert sanitize_name("1abc") == "__abc"


@pytest.mark.parametrize("bad", [
    pa.uint64(), pa.dictionary(pa.int32(), pa.string()), pa.null(), pa.float16(),
    pa.map_(pa.int32(), pa.string()), pa.list_(pa.uint64()), pa.decimal256(50, 2),
])
def test_unsupported_types_raise_schema_error(bad: pa.DataType) -> None:
    with pytest.raises(SchemaError, match=r"column 'c'.*(supported|string keys)"):
        arrow_to_avro(pa.schema([("c", bad)]), "t")


def test_invalid_column_names_raise_schema_error() -> None:
    with pytest.raises(SchemaError, match="my-col"):
        arrow_to_avro(pa.schema([("my-col", pa.int32())]), "t")
    with pytest.raises(SchemaError, match="s.bad name"):
        arrow_to_avro(pa.schema([("s", pa.struct([("bad name", pa.int32())]))]), "t")


# ------------------------------------------------------------------------------------------ avro -> arrow


def test_avro_to_arrow_hudi_and_spark_forms() -> None:
    schema = {
        "type": "record", "name": "r", "namespace": "hoodie.t", "fields": [
            {"name": "a", "type": ["long", "null"]},
            {"name": "b", "type": "int"},
            {"name": "s", "type": ["null", {"type": "string", "avro.java.string": "String"}]},
            {"name": "e", "type": ["null", {"type": "enum", "name": "E", "symbols": ["X", "Y"]}]},
            {"name": "f", "type": ["null", {"type": "fixed", "name": "F", "size": 3}]},
            {"name": "db", "type": ["null", {"type": "bytes", "logicalType": "decimal", "precision": 30,
                                             "scale": 15}]},
            {"name": "tm", "type": ["null", {"type": "int", "logicalType": "time-millis"}]},
            {"name": "tu", "type": ["null", {"type": "long", "logicalType": "time-micros"}]},
            {"name": "ts", "type": ["null", {"type": "long", "logicalType": "timestamp-millis"}]},
            {"name": "lt", "type": ["null", {"type": "long", "logicalType": "local-timestamp-micros"}]},
            {"name": "u", "type": ["null", {"type": "string", "logicalType": "uuid"}]},
            {"name": "nested", "type": ["null", {"type": "record", "name": "N", "fields": [
                {"name": "x", "type": ["null", "double"]}]}]},
            {"name": "again", "type": ["null", "N"]},  # named type referenced later
            {"name": "again_full", "type": ["null", "hoodie.t.N"]},
            {"name": "f2", "type": ["null", "F"]},
            {"name": "m", "type": ["null", {"type": "map", "values": ["null", "long"]}]},
            {"name": "arr", "type": ["null", {"type": "array", "items": "string"}]},
            {"name": "weird_logical", "type": ["null", {"type": "long", "logicalType": "made-up"}]},
        ]}
    n = pa.struct([pa.field("x", pa.float64())])
    assert avro_to_arrow(schema).equals(pa.schema([
        ("a", pa.int64()), pa.field("b", pa.int32(), nullable=False), ("s", pa.string()), ("e", pa.string()),
        ("f", pa.binary()), ("db", pa.decimal128(30, 15)), ("tm", pa.time32("ms")), ("tu", pa.time64("us")),
        ("ts", pa.timestamp("ms", tz="UTC")), ("lt", pa.timestamp("us")), ("u", pa.string()), ("nested", n),
        ("again", n), ("again_full", n), ("f2", pa.binary()), ("m", pa.map_(pa.string(), pa.int64())),
        ("arr", pa.list_(pa.field("item", pa.string(), nullable=False))), ("weird_logical", pa.int64()),
    ]))


@pytest.mark.parametrize("bad", [
    "not json", "[1, 2]", {"type": "long"},
    {"type": "record", "name": "r", "fields": [{"name": "x", "type": ["null", "int", "string"]}]},
    {"type": "record", "name": "r", "fields": [{"name": "x", "type": "Unknown"}]},
    {"type": "record", "name": "r", "fields": [{"name": "x", "type": ["null", "r"]}]},
    {"type": "record", "name": "r", "fields": [{"name": "x"}]},
])
def test_avro_to_arrow_rejects_unsupported(bad: Any) -> None:
    with pytest.raises(SchemaError):
        avro_to_arrow(bad)


def _unescape_properties(value: str) -> str:
    return re.sub(r"\\u([0-9a-fA-F]{4})|\\(.)",
                  lambda m: chr(int(m.group(1), 16)) if m.group(1) else {"t": "\t", "n": "\n"}.get(m.group(2),
                                                                                               m.group(2)),
                  value)


def _reference_schemas(reference_dir: Path) -> dict[str, str]:
    """Every schema Apache Hudi wrote into the data tables (commit metadata, create.schema, log headers)."""
    found: dict[str, str] = {}
    for root, _, files in os.walk(reference_dir):
        if f"{os.sep}.hoodie{os.sep}metadata" in root:  # metadata table: internal multi-branch unions
            continue
        for name in files:
            path = os.path.join(root, name)
            data = Path(path).read_bytes()
            if name.endswith((".commit", ".deltacommit", ".replacecommit")) and data.strip():
                is_avro = data[:4] == b"Obj\x01"
                record = next(fastavro.reader(io.BytesIO(data))) if is_avro else json.loads(data)
                schema = (record.get("extraMetadata") or {}).get("schema")  # type: ignore[union-attr]
                if schema:
                    found[path] = schema
            elif name == "hoodie.properties":
                for line in data.decode("latin-1").splitlines():
                    if line.startswith("hoodie.table.create.schema="):
                        found[path] = _unescape_properties(line.split("=", 1)[1])
            elif ".log." in name:
                for i, block in enumerate(read_blocks(data, path)):
                    if block.schema_json:
                        found[f"{path}#{i}"] = block.schema_json
    return found


def test_reference_table_schemas_parse(reference_dir: Path) -> None:
    schemas = _reference_schemas(reference_dir)
    assert len(schemas) > 50
    for where, text in schemas.items():
        arrow = avro_to_arrow(text)
        assert len(arrow) > 0, where
        # our Avro for the same Arrow schema converts back to the same Arrow schema
        again = avro_to_arrow(arrow_to_avro(arrow, "t"))
        assert again.equals(pa.schema([pa.field(f.name, normalized(f.type)) for f in arrow])), where
    trips = avro_to_arrow(next(s for w, s in schemas.items() if "8i1u" in w and w.endswith(".deltacommit")))
    assert trips.names == ["ts", "uuid", "rider", "driver", "fare", "city"]
    txns = avro_to_arrow(next(s for w, s in schemas.items() if "v9_txns_simple_meta" in w and "#" in w))
    assert txns.field("amount").type == pa.decimal128(15, 2)
    assert txns.field("txn_datetime").type == pa.timestamp("us", tz="UTC")
    assert txns.field("txn_date").type == pa.date32()
    assert txns.names[:5] == META_COLUMNS


# ------------------------------------------------------------------------------------------ records


def test_avro_records_to_arrow_accepts_fastavro_values() -> None:
    schema = pa.schema([("d", pa.decimal128(10, 2)), ("day", pa.date32()),
                        ("ts", pa.timestamp("us", tz="UTC")), ("m", pa.map_(pa.string(), pa.int64())),
                        ("l", pa.list_(pa.string())),
                        ("missing", pa.int32())])
    when = dt.datetime(2024, 1, 2, 3, 4, 5, 6, tzinfo=dt.timezone.utc)
    records: list[dict[str, Any]] = [
        {"d": decimal.Decimal("1.50"), "day": dt.date(2024, 1, 2), "ts": when, "m": {"a": 1}, "l": ["x"]},
        {"d": None, "day": None, "ts": None, "m": None, "l": None},
    ]
    table = avro_records_to_arrow(records, schema)
    assert table.schema.equals(schema)
    assert table.to_pylist()[0] == {"d": decimal.Decimal("1.50"), "day": dt.date(2024, 1, 2), "ts": when,
                                    "m": [("a", 1)], "l": ["x"], "missing": None}


def test_arrow_to_avro_records_uses_wire_units() -> None:
    table = pa.table({
        "ts": pa.array([1_500], pa.timestamp("ns", tz="UTC")), "day": pa.array([3], pa.date32()),
        "m": pa.array([[("k", [("x", 1)])]], pa.map_(pa.string(), pa.map_(pa.string(), pa.int8()))),
    })
    assert arrow_to_avro_records(table) == [{"ts": 1, "day": 3, "m": {"k": {"x": 1}}}]


# ------------------------------------------------------------------------------------------ meta


def test_with_meta_and_strip_meta() -> None:
    data = pa.schema([("id", pa.int64()), ("_hoodie_record_key", pa.string()),
                      (OPERATION_COLUMN, pa.string()), ("name", pa.string())])
    full = with_meta(data)
    assert full.names == [*META_COLUMNS, OPERATION_COLUMN, "id", "name"]
    commit_time = full.field("_hoodie_commit_time")
    assert commit_time.type == pa.string() and commit_time.nullable
    assert strip_meta(full).names == ["id", "name"]
    assert with_meta(pa.schema([("x", pa.int32())])).names == [*META_SCHEMA.names, "x"]


def test_fit_table_evolves_nested_columns() -> None:
    old = pa.table({
        "id": pa.array([1, 2], pa.int32()),
        "s": pa.array([{"a": 1}, None], pa.struct([("a", pa.int32())])),
        "l": pa.array([[{"a": 1}], None], pa.list_(pa.struct([("a", pa.int32())]))),
        "dropped": ["x", "y"],
    })
    old_all, old = old, old.slice(1, 1)
    new_struct = pa.struct([("a", pa.int64()), ("b", pa.string())])
    target = pa.schema([("id", pa.int64()), ("s", new_struct), ("l", pa.list_(new_struct)),
                        ("added", pa.float64())])
    fitted = fit_table(old, target)
    assert fitted.schema.equals(target)
    assert fitted.to_pylist() == [{"id": 2, "s": None, "l": None, "added": None}]
    first = fit_table(pa.concat_tables([old_all.slice(0, 1), old]), target)
    assert first.to_pylist() == [
        {"id": 1, "s": {"a": 1, "b": None}, "l": [{"a": 1, "b": None}], "added": None},
        {"id": 2, "s": None, "l": None, "added": None},
    ]
    with pytest.raises(SchemaError, match="'dropped'"):
        fit_table(pa.table({"dropped": ["x"]}), pa.schema([("dropped", pa.int64())]), "f.parquet")
