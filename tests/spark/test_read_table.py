"""hudi_ds.spark.read_table against format("hudi-py"): the same schema and rows (meta columns included) for
copy-on-write and merge-on-read tables, read-optimized and time-travel queries, evolved schemas, filters,
awkward partition paths, Apache Hudi's reference tables and random upsert/delete/compaction histories, with
the base-only slices read by Spark's parquet scan and the rest by the source, both at one instant."""

from __future__ import annotations

import tempfile
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st
from model import DictModel
from tables import rows

from hudi_ds import HudiTable
from hudi_ds.index.bucket import bucket_for_hash_values
from hudi_ds.read import query
from hudi_ds.spark import read_table
from hudi_ds.spark.options import parse_spark_options
from hudi_ds.spark.read_table import plan_split

pytestmark = pytest.mark.spark

SCHEMA = pa.schema([("key", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("val", pa.int64())])
COLS = SCHEMA.names
PARTS = ["p1", "p2", "p3"]
NO_SERVICES = {"compaction.schedule.enabled": False, "hoodie.clean.automatic": False,
               "hoodie.archive.automatic": False}


def batch(keys: range, ts: int, parts: list[str] = PARTS) -> pa.Table:
    return pa.Table.from_pylist([{"key": f"k{i:03d}", "part": parts[i % len(parts)], "ts": ts, "val": i * ts}
                                 for i in keys], schema=SCHEMA)


def create(path: str, table_type: str, buckets: int = 2, **kwargs: Any) -> HudiTable:
    return HudiTable.create(path, table_name="rt", record_key="key", ordering_field="ts", partition_by="part",
                            table_type=table_type, buckets=buckets, options=NO_SERVICES, **kwargs)


def executed(df: Any) -> str:
    return str(df._jdf.queryExecution().executedPlan().toString())


def scans(df: Any) -> tuple[int, int]:
    """(Spark parquet scans, hudi-py source scans) in the plan of `df`."""
    plan = executed(df)
    return plan.count("FileScan parquet"), plan.count("BatchScan hudi-py")


def same_as_source(spark: Any, path: str, **options: Any) -> pa.Table:
    """read_table's result, checked against format("hudi-py") with the same options (schema and every row)."""
    ours = read_table(spark, path, **options)
    theirs = spark.read.format("hudi-py").options(**options).load(path)
    assert ours.schema == theirs.schema
    got, want = ours.toArrow(), theirs.toArrow()
    assert got.num_rows == want.num_rows
    assert rows(got, got.column_names) == rows(want, want.column_names)
    return got


def test_copy_on_write_table_is_read_by_spark_alone(spark, table_path):
    t = create(table_path, "COPY_ON_WRITE")
    t.write(batch(range(40), 1))
    t.write(batch(range(0, 40, 3), 2))
    t.write(batch(range(0, 40, 7), 3), operation="delete")
    got = same_as_source(spark, table_path)
    assert got.num_rows == 40 - len(range(0, 40, 7))
    assert scans(read_table(spark, table_path)) == (1, 0)
    split = plan_split(table_path, parse_spark_options({}))
    assert split is not None and not split.merges and len(split.base_files) == 6  # 3 partitions x 2 buckets
    assert all(uri.startswith(f"file://{table_path}/") for uri in split.uris)


def _mor_with_some_logs(path: str) -> tuple[HudiTable, DictModel]:
    """Every slice compacted, then updates and deletes into p1 (logs) and a new partition p4 (base files)."""
    t = create(path, "MERGE_ON_READ")
    model = DictModel("key", "ts", "part", merge_on_read=True,
                      bucket_of=lambda key: bucket_for_hash_values([key[0]], 2))
    for data in (batch(range(30), 1), batch(range(0, 30, 2), 2)):
        t.write(data)
        model.upsert(data.to_pylist())
    assert t.compact()
    model.compact()
    later = [batch(range(0, 30, 3), 3, ["p1"]), batch(range(100, 106), 3, ["p4"])]
    for data in later:
        t.write(data)
        model.upsert(data.to_pylist())
    gone = batch(range(1, 30, 5), 4, ["p1"])
    t.write(gone, operation="delete")
    model.delete(gone.to_pylist())
    return t, model


def test_merge_on_read_unions_parquet_scan_and_merged_slices(spark, table_path):
    t, model = _mor_with_some_logs(table_path)
    split = plan_split(table_path, parse_spark_options({}))
    slices = query.plan_snapshot(t.snapshot()).slices
    with_logs = [sl for sl in slices if sl.log_files]
    assert {sl.partition for sl in with_logs} == {"p1"} and {sl.partition for sl in slices} == {*PARTS, "p4"}
    assert split is not None and split.merges and len(split.base_files) == len(slices) - len(with_logs)
    got = same_as_source(spark, table_path)
    assert rows(got, COLS) == model.sorted_rows(COLS)
    assert scans(read_table(spark, table_path)) == (1, 1)
    # the source half reads the slices with logs only
    merged_only = spark.read.format("hudi-py").option("hoodie.datasource.read.slices", "with_logs").load(table_path)
    assert {r.part for r in merged_only.select("part").distinct().collect()} == {"p1"}


def test_read_optimized_reads_base_files_only(spark, table_path):
    _mor_with_some_logs(table_path)
    ro = {"hoodie.datasource.query.type": "read_optimized"}
    got = same_as_source(spark, table_path, **ro)
    snapshot = read_table(spark, table_path).toArrow()
    assert rows(got, COLS) != rows(snapshot, COLS)  # the logs' updates and deletes are not in it
    assert scans(read_table(spark, table_path, **ro)) == (1, 0)


def test_time_travel_and_the_instant_both_halves_share(spark, table_path):
    t, _ = _mor_with_some_logs(table_path)
    before_delete = [i.requested_time for i in t.timeline() if i.is_completed][-2]
    split = plan_split(table_path, parse_spark_options({"as.of.instant": before_delete}))
    assert split is not None and split.instant == before_delete and split.merges and split.base_files
    got = same_as_source(spark, table_path, **{"as.of.instant": before_delete})
    assert rows(got, COLS) == rows(t.to_arrow(as_of=before_delete), COLS) != rows(t.to_arrow(), COLS)
    # planned now, executed after another commit: both halves read the table as it was when planned
    df = read_table(spark, table_path)
    expected = rows(t.to_arrow(), COLS)
    t.write(batch(range(0, 30, 3), 9, ["p1"]))  # into the slices with logs
    assert rows(df.toArrow(), COLS) == expected
    assert rows(read_table(spark, table_path).toArrow(), COLS) != expected


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_evolved_schema_old_base_files_lack_a_column_and_store_narrower_types(spark, table_path, table_type):
    t = HudiTable.create(table_path, table_name="rt", record_key="key", ordering_field="ts", partition_by="part",
                         table_type=table_type, buckets=1, options=NO_SERVICES)
    t.write(pa.table({"key": ["a", "b", "c", "d"], "part": ["p1", "p1", "p2", "p2"], "ts": [1, 1, 1, 1],
                      "n": pa.array([1, -2, 3, 2**31 - 1], pa.int32()),
                      "f": pa.array([0.1, 1.5, -2.25, 3.3], pa.float32())}))
    # a new column and wider types, written to p1 only: p2's base file keeps the old schema
    t.write(pa.table({"key": ["a", "e"], "part": ["p1", "p1"], "ts": [2, 2], "n": pa.array([2**40, 5], pa.int64()),
                      "f": pa.array([0.1, 0.7], pa.float64()), "note": ["new", None]}))
    if table_type == "MERGE_ON_READ":
        # the new rows are in a log: a read-optimized query scans only base files of the old schema
        old = same_as_source(spark, table_path, **{"hoodie.datasource.query.type": "read_optimized"})
        assert old.schema.field("n").type == pa.int64() and old.schema.field("f").type == pa.float64()
        assert old["note"].null_count == old.num_rows == 4
        assert scans(read_table(spark, table_path, **{"hoodie.datasource.query.type": "read_optimized"})) == (1, 0)
        t.compact()
    got = same_as_source(spark, table_path)
    assert got.schema.field("n").type == pa.int64() and got.schema.field("f").type == pa.float64()
    by_key = {r["key"]: r for r in got.to_pylist()}
    assert by_key["c"]["note"] is None and by_key["a"]["note"] == "new"
    assert by_key["d"]["n"] == 2**31 - 1 and by_key["c"]["f"] == -2.25
    assert by_key["b"]["f"] == pa.scalar(1.5, pa.float32()).cast(pa.float64()).as_py()
    assert by_key["a"]["f"] == 0.1 and by_key["d"]["f"] == pa.scalar(3.3, pa.float32()).cast(pa.float64()).as_py()
    assert scans(read_table(spark, table_path)) == (2, 0)  # one scan per stored schema
    assert "cast(n" in executed(read_table(spark, table_path))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_where_on_the_partition_column(spark, table_path, table_type):
    if table_type == "MERGE_ON_READ":
        _mor_with_some_logs(table_path)
    else:
        create(table_path, table_type).write(batch(range(30), 1))
    for part in ("p1", "p2"):
        ours = read_table(spark, table_path).where(f"part = '{part}'")
        theirs = spark.read.format("hudi-py").load(table_path).where(f"part = '{part}'")
        got = ours.toArrow()
        assert got.num_rows > 0 and set(got["part"].to_pylist()) == {part}
        assert rows(got, got.column_names) == rows(theirs.toArrow(), got.column_names)
        assert f"EqualTo(part,{part})" in executed(ours)  # pushed into the parquet scan


def test_partition_paths_that_look_like_globs_or_hidden_files(spark, table_path):
    parts = ["a[1] b", "x{y,z}*?", "50%20", "_under", "é:ü"]
    t = create(table_path, "COPY_ON_WRITE", buckets=1)
    t.write(batch(range(20), 1, parts))
    got = same_as_source(spark, table_path)
    assert sorted(set(got["part"].to_pylist())) == sorted(parts)
    assert scans(read_table(spark, table_path)) == (1, 0)


def test_queries_the_split_cannot_serve_go_to_the_source(spark, table_path):
    t, _ = _mor_with_some_logs(table_path)
    first = next(i.requested_time for i in t.timeline() if i.is_completed)
    incremental = {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": first}
    for options in (incremental, {**incremental, "hoodie.datasource.query.incremental.format": "cdc"}):
        assert plan_split(table_path, parse_spark_options(options)) is None
        same_as_source(spark, table_path, **options)
        assert scans(read_table(spark, table_path, **options))[0] == 0
    for uri in ("s3://bucket/table", "s3a://bucket/table", "gs://bucket/table"):
        assert plan_split(uri, parse_spark_options({})) is None  # no storage is opened for them


@pytest.mark.interop
@pytest.mark.parametrize("query_type", ["snapshot", "read_optimized"])
def test_reference_tables(spark, reference_dir, query_type):
    """Tables Apache Hudi wrote (v6 to v9, avro and parquet logs, without meta columns, empty)."""
    split_some = False
    for table in sorted(p for p in reference_dir.iterdir() if p.is_dir()):
        same_as_source(spark, str(table), **{"hoodie.datasource.query.type": query_type})
        split = plan_split(str(table), parse_spark_options({"hoodie.datasource.query.type": query_type}))
        split_some |= split is not None and bool(split.base_files)
    assert split_some


# ---- property: random histories ----------------------------------------------------------------------

def rows_in(part: str) -> st.SearchStrategy[list[dict[str, Any]]]:
    """A batch into one partition: histories then leave some file groups with logs and others without."""
    return st.lists(st.fixed_dictionaries({
        "key": st.sampled_from([f"k{i}" for i in range(10)] + ["ü€", "a,b"]),
        "part": st.just(part),
        "ts": st.integers(min_value=0, max_value=4),
        "val": st.integers(min_value=-100, max_value=100),
    }), min_size=1, max_size=10)


step = st.tuples(st.sampled_from(["upsert", "upsert", "upsert", "delete", "compact"]),
                 st.sampled_from(PARTS).flatmap(rows_in))


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_type=st.sampled_from(["MERGE_ON_READ", "MERGE_ON_READ", "COPY_ON_WRITE"]), buckets=st.integers(1, 2),
       steps=st.lists(step, min_size=1, max_size=6))
def test_any_history_reads_as_the_source_does(spark, table_type, buckets, steps):
    with tempfile.TemporaryDirectory() as tmp:
        t = HudiTable.create(tmp + "/t", table_name="prop", record_key="key", ordering_field="ts",
                             partition_by="part", table_type=table_type, buckets=buckets, options=NO_SERVICES)
        model = DictModel("key", "ts", "part", merge_on_read=table_type == "MERGE_ON_READ",
                          bucket_of=lambda key: bucket_for_hash_values([key[0]], buckets))
        first = [{"key": f"k{i}", "part": part, "ts": 0, "val": i} for i in range(10) for part in PARTS]
        for op, data in [("upsert", first), *steps]:  # a first load into every partition, then one at a time
            if op == "compact":
                if table_type == "MERGE_ON_READ" and t.compact():
                    model.compact()
                continue
            t.write(pa.Table.from_pylist(data, schema=SCHEMA), operation=op)
            if op == "delete":
                model.delete(data)
            else:
                model.upsert(data)
        for query_type in ("snapshot", "read_optimized"):
            options = {"hoodie.datasource.query.type": query_type}
            split = plan_split(t.path, parse_spark_options(options))
            event(f"{table_type} {query_type}: " + ("source only" if split is None or not split.base_files else
                                                    "parquet + source" if split.merges else "parquet only"))
            got = same_as_source(spark, t.path, **options)
            if query_type == "snapshot":
                assert rows(got, COLS) == model.sorted_rows(COLS)
