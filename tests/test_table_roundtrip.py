"""Every write operation, through HudiTable, read back by our reader and by hudi-rs."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from model import DictModel
from tables import assert_same_rows, hudi_rs, rows

from hudi_ds import HudiTable

LAYOUTS = {
    # name: (partition_by, hive_style)
    "nonpartitioned": ([], False),
    "plain": (["dt"], False),
    "hive": (["dt"], True),
    "two_level": (["dt", "flag"], True),
}
KEYS = {
    "string": "id",
    "int": "num",
    "composite": ["id", "num"],
}


def make_rows(rng: random.Random, ids: list[int], ts: int, dts: list[str]) -> list[dict]:
    return [
        {
            "id": f"k{i}",
            "num": i,
            "name": f"name-{i}-{ts}",
            "amount": round(rng.random() * 100, 3),
            "ts": ts,
            "dt": dts[i % len(dts)],
            "flag": i % 2,
        }
        for i in ids
    ]


SCHEMA = pa.schema([("id", pa.string()), ("num", pa.int64()), ("name", pa.string()), ("amount", pa.float64()),
                    ("ts", pa.int64()), ("dt", pa.string()), ("flag", pa.int32())])


def to_table(rows_: list[dict]) -> pa.Table:
    return pa.Table.from_pylist(rows_, schema=SCHEMA)


COLUMNS = ["id", "num", "name", "amount", "ts", "dt", "flag"]


def check(table: HudiTable, model: DictModel) -> None:
    ours = table.to_arrow()
    assert rows(ours, COLUMNS) == model.sorted_rows(COLUMNS)
    theirs = hudi_rs(table.path)
    assert_same_rows(ours, theirs, COLUMNS + ["_hoodie_record_key", "_hoodie_partition_path"])
    if table.config.is_mor:
        assert_same_rows(table.to_arrow(read_optimized=True), hudi_rs(table.path, read_optimized=True),
                         COLUMNS + ["_hoodie_record_key"])


@pytest.mark.interop
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
@pytest.mark.parametrize("key", list(KEYS))
@pytest.mark.parametrize("version", [6, 9])
def test_every_operation_round_trips(tmp_path, table_type, layout, key, version):
    parts, hive = LAYOUTS[layout]
    rng = random.Random(f"{table_type}{layout}{key}")
    t = HudiTable.create(str(tmp_path / "t"), table_name="rt", record_key=KEYS[key], ordering_field="ts",
                         partition_by=parts, table_type=table_type, buckets=3, hive_style_partitioning=hive,
                         options={"hoodie.write.table.version": str(version)})
    assert t.config.version == version
    model = DictModel(KEYS[key], "ts", parts, merge_on_read=table_type == "MERGE_ON_READ")
    dts = ["2024-01-01", "2024-01-02", "2024-01-03"]

    first = make_rows(rng, list(range(40)), 10, dts)
    t.write(to_table(first), operation="insert")
    model.upsert(first)
    check(t, model)

    # updates with a higher ordering value win, with a lower one lose; plus new keys
    higher = make_rows(rng, list(range(0, 10)), 20, dts)
    lower = make_rows(rng, list(range(10, 20)), 5, dts)
    new = make_rows(rng, list(range(40, 50)), 20, dts)
    batch = higher + lower + new
    t.write(to_table(batch), operation="upsert")
    model.upsert(batch)
    check(t, model)

    # deletes: some with a high ordering value (applied), one with a low one (ignored)
    dels = make_rows(rng, [1, 2, 3, 41], 30, dts) + make_rows(rng, [30], 1, dts)
    t.write(to_table(dels), operation="delete")
    model.delete(dels)
    check(t, model)

    # a second upsert round to stack log files on MOR
    again = make_rows(rng, list(range(5, 15)), 40, dts)
    t.write(to_table(again), operation="upsert")
    model.upsert(again)
    check(t, model)

    if parts:
        over = make_rows(rng, [100, 103, 106], 50, ["2024-01-02"])
        t.write(to_table(over), operation="insert_overwrite")
        model.overwrite(over, whole_table=False)
        check(t, model)

    final = make_rows(rng, [7, 8], 60, dts)
    t.write(to_table(final), operation="insert_overwrite_table")
    model.overwrite(final, whole_table=True)
    check(t, model)
    t.write(to_table(make_rows(rng, [8, 9], 70, dts)), operation="bulk_insert")
    model.upsert(make_rows(random.Random(0), [8, 9], 70, dts))
    ours = t.to_arrow(columns=["id", "ts"])
    assert rows(ours, ["id", "ts"]) == sorted(
        ((r["id"], r["ts"]) for r in model.rows.values()), key=repr)
    assert_same_rows(t.to_arrow(), hudi_rs(t.path), ["id", "ts", "_hoodie_record_key"])


def test_polars_input_and_output(tmp_path):
    import polars as pl

    t = HudiTable.create(str(tmp_path / "p"), table_name="p", record_key="id", ordering_field="ts",
                         partition_by="dt")
    df = pl.DataFrame({"id": ["a", "b"], "ts": [1, 2], "dt": ["x", "y"], "v": [1.5, 2.5]})
    t.write(df)
    out = t.to_polars(columns=["id", "v"]).sort("id")
    assert out["v"].to_list() == [1.5, 2.5]


def test_record_batch_iterable_input(tmp_path):
    t = HudiTable.create(str(tmp_path / "b"), table_name="b", record_key="id", ordering_field="ts")
    batches = (pa.RecordBatch.from_pylist([{"id": i, "ts": 1}]) for i in range(5))
    t.write(batches)
    assert sorted(t.to_arrow(columns=["id"])["id"].to_pylist()) == [0, 1, 2, 3, 4]


def test_time_travel_and_incremental(tmp_path):
    t = HudiTable.create(str(tmp_path / "tt"), table_name="tt", record_key="id", ordering_field="ts",
                         partition_by="dt")
    c1 = t.write(to_table(make_rows(random.Random(1), [1, 2, 3], 1, ["a"])))
    c2 = t.write(to_table(make_rows(random.Random(2), [2, 4], 2, ["a", "b"])))
    c3 = t.write(to_table(make_rows(random.Random(3), [3], 0, ["a"])), operation="delete")
    assert rows(t.to_arrow(as_of=c1), ["id", "ts"]) == [("k1", 1), ("k2", 1), ("k3", 1)]
    assert rows(t.to_arrow(as_of=c2), ["id", "ts"]) == [("k1", 1), ("k2", 2), ("k3", 1), ("k4", 2)]
    assert rows(t.to_arrow(as_of=c3), ["id"]) == [("k1",), ("k2",), ("k4",)]
    assert rows(t.incremental(c1, c2), ["id", "ts"]) == [("k2", 2), ("k4", 2)]
    assert rows(t.incremental("0", c1), ["id"]) == [("k1",), ("k2",), ("k3",)]
    assert t.incremental(c3).num_rows == 0
    assert [i.requested_time for i in t.timeline() if i.is_completed] == [c1, c2, c3]
    theirs = hudi_rs(t.path, as_of=c1)
    assert rows(theirs, ["id", "ts"]) == [("k1", 1), ("k2", 1), ("k3", 1)]


def test_filters_prune_partitions_and_rows(tmp_path):
    t = HudiTable.create(str(tmp_path / "f"), table_name="f", record_key="id", ordering_field="ts",
                         partition_by="dt", hive_style_partitioning=True)
    t.write(to_table(make_rows(random.Random(1), list(range(30)), 1, ["d1", "d2", "d3"])))
    got = t.to_arrow(filters=[("dt", "=", "d2"), ("num", ">=", 10)], columns=["num", "dt"])
    assert sorted(got["num"].to_pylist()) == [n for n in range(10, 30) if n % 3 == 1]
    assert set(got["dt"].to_pylist()) == {"d2"}
    assert t.to_arrow(filters=[("dt", "in", ["d1", "d3"]), ("flag", "!=", 0)]).num_rows == len(
        [n for n in range(30) if n % 3 != 1 and n % 2 == 1])
    assert t.to_arrow(filters=[("dt", "not in", ["d1", "d2", "d3"])]).num_rows == 0


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_spilled_write_in_bounded_memory(tmp_path, table_type):
    """A write larger than the buffer spills file groups to disk and still commits every row once."""
    t = HudiTable.create(str(tmp_path / "s"), table_name="s", record_key="num", ordering_field="ts",
                         partition_by="dt", table_type=table_type, buckets=2)
    rng = random.Random(5)
    batches = (to_table(make_rows(rng, list(range(i * 500, (i + 1) * 500)), 1, ["a", "b", "c"])).to_batches()[0]
               for i in range(20))
    t.write(batches, buffer_bytes=64 * 1024)
    again = (to_table(make_rows(rng, list(range(i * 500, i * 500 + 100)), 2, ["a", "b", "c"])).to_batches()[0]
             for i in range(20))
    t.write(again, buffer_bytes=16 * 1024)
    got = t.to_arrow(columns=["num", "ts"])
    assert got.num_rows == 10_000
    assert sorted(got["num"].to_pylist()) == list(range(10_000))
    assert sum(1 for ts in got["ts"].to_pylist() if ts == 2) == 2000
    streamed = pa.Table.from_batches(list(t.to_batches(columns=["num", "ts"])))
    assert rows(streamed, ["num", "ts"]) == rows(got, ["num", "ts"])
    assert rows(hudi_rs(t.path), ["num", "ts"]) == rows(got, ["num", "ts"])
