"""Incoming column types against the table's, as Apache Hudi's Spark writer reconciles them: an incoming type the
table's promotes to is cast to it (SchemaChangeUtils.isTypeUpdateAllow), a table column the incoming type can read
takes it (int -> long -> float -> double), anything else is a SchemaError. A timestamp key generator reads the
partition instant as the data gives it, so a table whose epoch column Hudi's SQL UPDATE left as text takes integers."""

from __future__ import annotations

import datetime as dt
import re
import shutil
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable, InvalidDataError, SchemaError
from hudi_ds.cli.validate import validate

D = pa.decimal128
DAY = dt.date(2024, 1, 15)

# (table type, incoming type, the incoming value, the value read back): the table keeps its type
PROMOTED: list[tuple[pa.DataType, pa.DataType, Any, Any]] = [
    (pa.int32(), pa.int8(), 7, 7),
    (pa.int64(), pa.int16(), 7, 7),
    (pa.int64(), pa.int32(), 7, 7),
    (pa.float32(), pa.int32(), 7, 7.0),
    (pa.float64(), pa.int32(), -7, -7.0),
    (pa.string(), pa.int32(), 7, "7"),
    (D(10, 2), pa.int32(), 7, Decimal("7.00")),
    (pa.float32(), pa.int64(), 16777217, 16777216.0),  # Java's (float) long rounds
    (pa.float64(), pa.int64(), 2**53 + 1, float(2**53)),
    (pa.string(), pa.int64(), 1705311000000, "1705311000000"),
    (D(20, 2), pa.int64(), 1705311000000, Decimal("1705311000000.00")),
    (pa.float64(), pa.float32(), 1.5, 1.5),
    (pa.string(), pa.float32(), 0.1, "0.1"),  # Float.toString: the float's own shortest digits
    (D(10, 2), pa.float32(), 1.5, Decimal("1.50")),
    (pa.string(), pa.float64(), 1e7, "1.0E7"),  # Double.toString
    (pa.string(), pa.float64(), 12.0, "12.0"),
    (pa.string(), pa.float64(), 0.0001, "1.0E-4"),
    (D(10, 3), pa.float64(), 2.25, Decimal("2.250")),
    (pa.string(), pa.date32(), DAY, "2024-01-15"),
    (pa.string(), pa.binary(), b"abc", "abc"),
    (D(12, 2), D(10, 2), Decimal("12.50"), Decimal("12.50")),
    (D(12, 4), D(10, 2), Decimal("12.50"), Decimal("12.5000")),  # DecimalBase.isWiderThan
    (pa.string(), D(10, 2), Decimal("12.50"), "12.50"),
    (pa.string(), D(12, 8), Decimal("0.00000001"), "1E-8"),  # BigDecimal.toString
    (pa.date32(), pa.string(), "2024-01-15", DAY),
    (D(10, 2), pa.string(), "12.5", Decimal("12.50")),
    (pa.binary(), pa.string(), "abc", b"abc"),
]

# (table type, incoming type, the table's value, the incoming value): the table's column takes the incoming type
EVOLVED: list[tuple[pa.DataType, pa.DataType, Any, Any]] = [
    (pa.int8(), pa.int32(), 1, 300),
    (pa.int32(), pa.int64(), 1, 2**40),
    (pa.int32(), pa.float32(), 1, 2.5),
    (pa.int32(), pa.float64(), 1, 2.5),
    (pa.int64(), pa.float64(), 2**40, 2.5),
    (pa.float32(), pa.float64(), 1.5, 2.25),
]

# (table type, incoming type, incoming value): Apache Hudi's writer refuses these too
REFUSED: list[tuple[pa.DataType, pa.DataType, Any]] = [
    (pa.int64(), pa.string(), "7"),  # text never becomes a number
    (pa.int32(), D(10, 2), Decimal("1.00")),
    (D(10, 2), D(12, 2), Decimal("1.00")),  # a wider decimal does not widen the table's
    (D(10, 2), D(10, 3), Decimal("1.000")),
    (pa.bool_(), pa.int32(), 1),
    (pa.string(), pa.bool_(), True),
    (pa.date32(), pa.timestamp("us"), dt.datetime(2024, 1, 15)),
    (pa.binary(), pa.int32(), 1),
    (pa.float64(), pa.date32(), DAY),
]


def table_with(tmp_path: Any, kind: pa.DataType, value: Any, table_type: str = "COPY_ON_WRITE") -> HudiTable:
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type=table_type)
    t.write(pa.table({"id": ["a"], "ts": [1], "dt": ["d"], "c": pa.array([value], kind)}))
    return t


def incoming(kind: pa.DataType, value: Any, key: str = "b") -> pa.Table:
    return pa.table({"id": [key], "ts": [2], "dt": ["d"], "c": pa.array([value], kind)})


def read_back(t: HudiTable) -> tuple[pa.DataType, list[tuple[Any, ...]], list[tuple[Any, ...]]]:
    ours = t.to_arrow()
    return ours.schema.field("c").type, rows(ours, ["id", "c"]), rows(hudi_rs(t.path), ["id", "c"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize(("stored", "given", "value", "expected"), PROMOTED, ids=lambda v: str(v))
def test_an_incoming_type_the_tables_promotes_to_is_stored_as_the_tables(tmp_path, table_type, stored, given, value,
                                                                         expected):
    first = {pa.string(): "x", pa.binary(): b"x", pa.date32(): dt.date(2000, 1, 1)}.get(stored, 1)
    t = table_with(tmp_path, stored, Decimal(1) if pa.types.is_decimal(stored) else first, table_type)
    t.write(incoming(given, value))
    kind, ours, theirs = read_back(HudiTable(t.path))
    assert kind.equals(stored)
    assert dict(ours)["b"] == expected
    assert ours == theirs


@pytest.mark.parametrize(("stored", "given", "old", "new"), EVOLVED, ids=lambda v: str(v))
def test_a_table_column_the_incoming_type_reads_takes_that_type(tmp_path, stored, given, old, new):
    t = table_with(tmp_path, stored, old)
    t.write(incoming(given, new))
    kind, ours, theirs = read_back(HudiTable(t.path))
    assert kind.equals(given)
    assert ours == [("a", old), ("b", new)]
    assert [(k, float(v) if isinstance(v, float) else v) for k, v in theirs] == ours


@pytest.mark.parametrize(("stored", "given", "value"), REFUSED, ids=lambda v: str(v))
def test_types_apache_hudi_refuses_are_refused_naming_the_way_out(tmp_path, stored, given, value):
    first = {pa.string(): "x", pa.binary(): b"x", pa.date32(): DAY, pa.bool_(): True}.get(stored, 1)
    t = table_with(tmp_path, stored, Decimal(1) if pa.types.is_decimal(stored) else first)
    way_out = f"column 'c' has type {given} but the table stores {stored}, and .* cast the column to {stored} "
    with pytest.raises(SchemaError, match=re.escape(way_out).replace(re.escape(".*"), ".*")):
        t.write(incoming(given, value))
    assert rows(HudiTable(t.path).to_arrow(), ["id"]) == [("a",)]


def test_a_value_the_tables_type_cannot_hold_is_refused(tmp_path):
    t = table_with(tmp_path, pa.date32(), DAY)
    with pytest.raises(SchemaError, match="column 'c': cannot store string as date32"):
        t.write(incoming(pa.string(), "not a date"))


# ---- the reference table whose epoch-millis partition column Hudi's SQL UPDATE left as text ---------------------

EPOCH = "cow_v9_timebasedkeygen_epochmillis"
PART, FILE = "_hoodie_partition_path", "_hoodie_file_name"


def test_an_epoch_column_stored_as_text_takes_integer_upserts_and_deletes(reference_dir, tmp_path):
    """Its commits after the SQL UPDATE record ts_millis as string (its files since hold text): integers from a
    user's source are formatted by the key generator as given and stored as the text Hudi stores."""
    path = tmp_path / EPOCH
    shutil.copytree(reference_dir / EPOCH, path)
    t = HudiTable(str(path))
    assert t.schema.field("ts_millis").type == pa.string()
    before = t.to_arrow()
    data_columns = [c for c in before.column_names if not c.startswith("_hoodie")]
    by_key = {r["txn_id"]: r for r in before.to_pylist()}
    changed, removed = by_key["TXN-002"], by_key["TXN-005"]
    group = changed[FILE].split("_")[0]
    update = {c: changed[c] for c in data_columns} | {"txn_ts": changed["txn_ts"] + 1, "txn_type": "refund"}
    fresh = update | {"txn_id": "TXN-100", "ts_millis": by_key["TXN-003"]["ts_millis"]}
    source_schema = pa.schema([pa.field("ts_millis", pa.int64()) if f.name == "ts_millis" else f
                               for f in t.schema])
    as_ints = [{**r, "ts_millis": int(r["ts_millis"])} for r in (update, fresh)]
    t.write(pa.Table.from_pylist(as_ints, schema=source_schema))
    t.write(pa.Table.from_pylist([{"txn_id": "TXN-005", "ts_millis": int(removed["ts_millis"]),
                                   "txn_ts": removed["txn_ts"]}]), operation="delete")

    after = HudiTable(str(path)).to_arrow()
    got = {r["txn_id"]: r for r in after.to_pylist() if r["txn_id"] != "TXN-001"}
    assert got["TXN-002"][FILE].split("_")[0] == group and got["TXN-002"][PART] == changed[PART]
    assert got["TXN-100"][PART] == by_key["TXN-003"][PART]  # the instant formatted as Hudi formatted it
    expected = [r for r in before.to_pylist() if r["txn_id"] not in ("TXN-002", "TXN-005")]
    want = sorted((tuple(r[c] for c in data_columns) for r in [*expected, update, fresh]), key=repr)
    assert rows(after, data_columns) == want == rows(hudi_rs(str(path)), data_columns)
    assert HudiTable(str(path)).schema.field("ts_millis").type == pa.string()
    report = validate(str(path))
    assert report["ok"], report["errors"]


def test_an_epoch_column_given_as_text_is_refused_naming_the_integer_way(reference_dir, tmp_path):
    path = tmp_path / EPOCH
    shutil.copytree(reference_dir / EPOCH, path)
    t = HudiTable(str(path))
    before = t.to_arrow()
    with pytest.raises(InvalidDataError, match="'ts_millis' holds text.*cast it to int64"):
        t.write(before.drop_columns([c for c in before.column_names if c.startswith("_hoodie")]).slice(0, 1))
