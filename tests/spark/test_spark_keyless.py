"""Tables without a record key through format("hudi-py"): created by a write with no record key option,
appended to by several tasks (each numbering its own rows), overwritten, streamed into; upserts, deletes and
changelog input refused. Read back by Spark, the core reader and hudi-rs."""

from __future__ import annotations

import os
import random
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import META, hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.index.bucket import bucket_of_file_id
from hudi_ds.keys.auto_keys import auto_key_bucket

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([("event", pa.string()), ("v", pa.int64()), ("dt", pa.string())])
COLUMNS = SCHEMA.names
KEY = re.compile(r"^(\d{17})_(\d+)_(\d+)$")


def events(seed: int, n: int) -> pa.Table:
    rng = random.Random(seed)
    return pa.Table.from_pylist([{"event": f"e{rng.randrange(5)}", "v": rng.randrange(3), "dt": rng.choice("ab")}
                                 for _ in range(n)], schema=SCHEMA)


def options(table_type: str = "MERGE_ON_READ", **extra: str) -> dict[str, str]:
    return {"hoodie.table.name": "kl", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.datasource.write.table.type": table_type, "hoodie.bucket.index.num.buckets": "4", **extra}


def write(spark: Any, data: pa.Table, path: str, opts: dict[str, str], tasks: int = 3,
          mode: str = "append") -> None:
    spark.createDataFrame(data).repartition(tasks).write.format("hudi-py").options(**opts).mode(mode).save(path)


def multiset(table: pa.Table) -> Counter:
    return Counter(tuple(r[c] for c in COLUMNS) for r in table.select(COLUMNS).to_pylist())


def check(spark: Any, path: str) -> pa.Table:
    """Spark, the core reader and hudi-rs return the same rows (meta columns included); keys are unique,
    generated in Hudi's form and stored in the bucket their instant and task name."""
    ours = HudiTable(path).to_arrow()
    assert rows(ours, META + COLUMNS) == rows(hudi_rs(path), META + COLUMNS)
    assert rows(spark.read.format("hudi-py").load(path).toArrow(), META + COLUMNS) == rows(ours, META + COLUMNS)
    keys = ours["_hoodie_record_key"].to_pylist()
    assert len(keys) == len(set(keys))
    buckets = HudiTable(path).config.num_buckets
    for r in ours.to_pylist():
        m = KEY.match(r["_hoodie_record_key"])
        assert m and m.group(1) == r["_hoodie_commit_time"]
        assert bucket_of_file_id(r["_hoodie_file_name"]) == auto_key_bucket(m.group(1), int(m.group(2)), buckets)
    return ours


def tasks_of(table: pa.Table, instant: str) -> set[int]:
    return {int(k.split("_")[1]) for k in table["_hoodie_record_key"].to_pylist() if k.startswith(instant + "_")}


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_appends_from_several_tasks_keep_every_row(spark, table_path, table_type):
    first, second = events(1, 60), events(2, 40)
    write(spark, first, table_path, options(table_type))
    t = HudiTable(table_path)
    assert t.config.record_key_fields == [] and "recordkey" not in Path(table_path, ".hoodie/hoodie.properties") \
        .read_text()
    write(spark, second, table_path, options(table_type), tasks=2)
    write(spark, first, table_path, options(table_type, **{"hoodie.datasource.write.operation": "bulk_insert"}))
    ours = check(spark, table_path)
    assert multiset(ours) == multiset(first) + multiset(second) + multiset(first)
    c1, c2, c3 = (i.requested_time for i in t.timeline())
    assert tasks_of(ours, c1) == {0, 1, 2} and tasks_of(ours, c2) == {0, 1}
    ops = [t.load_timeline().commit_metadata(i).operation_type for i in t.timeline()]
    assert ops == ["INSERT", "INSERT", "BULK_INSERT"]  # insert: the default operation without a record key


def test_overwrite_mode_replaces_the_rows(spark, table_path):
    write(spark, events(3, 50), table_path, options())
    fresh = events(4, 20)
    write(spark, fresh, table_path, options(), mode="overwrite")
    assert multiset(check(spark, table_path)) == multiset(fresh)
    only_a = fresh.filter(pa.compute.equal(pa.compute.field("dt"), "a"))
    write(spark, only_a, table_path, options(**{"hoodie.datasource.write.operation": "insert_overwrite"}),
          mode="overwrite")
    want = multiset(fresh.filter(pa.compute.equal(pa.compute.field("dt"), "b"))) + multiset(only_a)
    assert multiset(check(spark, table_path)) == want


def test_more_tasks_than_buckets(spark, table_path, tmp_path):
    """Tasks t and t + 2 share a bucket: merge-on-read adds a log file, copy-on-write merges their rows into
    the bucket's one base file (a new bucket, then an existing one)."""
    data = events(5, 80)
    write(spark, data, table_path, options(**{"hoodie.bucket.index.num.buckets": "2"}), tasks=4)
    assert multiset(check(spark, table_path)) == multiset(data)
    cow = str(tmp_path / "cow")
    opts = options("COPY_ON_WRITE", **{"hoodie.bucket.index.num.buckets": "2"})
    write(spark, data, cow, opts, tasks=4)
    write(spark, data, cow, opts, tasks=3)
    assert multiset(check(spark, cow)) == multiset(data) + multiset(data)
    versions = Counter(p.name.rsplit("_", 1)[-1] for p in Path(cow).rglob("*.parquet"))
    assert sorted(versions.values()) == [4, 4]  # per commit: one base file per bucket and partition


def _files(path: str) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*") if ".hoodie" not in p.parts)


@pytest.mark.parametrize("change,message", [
    ({"hoodie.datasource.write.operation": "upsert"}, "upsert needs a record key"),
    ({"hoodie.datasource.write.operation": "delete"}, "delete needs a record key"),
    ({"hoodie.datasource.write.changelog.column": "event"}, "changelog input updates and deletes records by key"),
    ({"hoodie.datasource.write.recordkey.field": "event"}, "has no record key"),
    ({"hoodie.datasource.write.precombine.field": "v"}, "contradicts"),
])
def test_keyed_writes_are_refused_and_change_nothing(spark, table_path, tmp_path, change, message):
    write(spark, events(6, 10), table_path, options())
    before, files = HudiTable(table_path).timeline(), _files(table_path)
    with pytest.raises(Exception) as err:
        write(spark, events(7, 5), table_path, options(**change))
    assert message in str(err.value)
    assert HudiTable(table_path).timeline() == before and _files(table_path) == files
    if "operation" in str(change):  # refused before a new table is created too
        with pytest.raises(Exception, match="needs a record key"):
            write(spark, events(7, 5), str(tmp_path / "new"), options(**change))
        assert not (tmp_path / "new").exists()


def test_streaming_appends_once_even_when_a_batch_is_replayed(spark, tmp_path):
    src, path, ck = tmp_path / "src", str(tmp_path / "t"), tmp_path / "ck"
    src.mkdir()
    batches = [events(10 + i, 15) for i in range(3)]
    for i, b in enumerate(batches):
        pq.write_table(b, src / f"{i:03d}.parquet")
        os.utime(src / f"{i:03d}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))  # Spark reads by mtime

    def run() -> None:
        df = spark.readStream.schema(spark.createDataFrame(batches[0]).schema).option("maxFilesPerTrigger", 1) \
            .parquet(str(src))
        q = (df.repartition(2).writeStream.format("hudi-py").options(**options())
             .option("checkpointLocation", str(ck)).trigger(availableNow=True).start(path))
        q.awaitTermination()
        assert q.exception() is None

    run()
    want = sum((multiset(b) for b in batches), Counter())
    assert multiset(check(spark, path)) == want
    before = HudiTable(path).timeline()
    commits = [i.requested_time for i in before if i.is_completed and i.action != "rollback"]
    last = max(ck.joinpath("commits").glob("[0-9]*"), key=lambda p: int(p.name))
    last.unlink()  # Spark replays that batch: the table already has it
    last.with_name(f".{last.name}.crc").unlink(missing_ok=True)
    run()
    assert multiset(check(spark, path)) == want
    after = HudiTable(path).timeline()
    assert [i.requested_time for i in after if i.is_completed and i.action != "rollback"] == commits
    new = [i.action for i in after[len(before):]]
    assert new and set(new) == {"rollback"}, new  # the replay's instant, rolled back; nothing committed
