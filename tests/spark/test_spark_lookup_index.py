"""Spark writes with Apache Hudi's lookup indexes (RECORD_INDEX included): `option("hoodie.index.type", ...)`
creates and writes such a table across several tasks, in batch writes and the streaming sink; one new key in two
tasks of a write is refused, nothing committed."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.record_index import all_locations
from hudi_ds.spark import cluster_by_bucket

pytestmark = [pytest.mark.spark]


def write(spark: Any, path: str, data: list[tuple[str, int, str, str]], partitions: int, clustered: bool = False,
          **options: str) -> None:
    df = spark.createDataFrame(data, "id string, ts long, dt string, v string").repartition(partitions)
    if clustered:  # one task per partition: a lookup-index table has one "bucket"
        df = cluster_by_bucket(df, path)
    (df.write.format("hudi-py").option("hoodie.datasource.write.recordkey.field", "id")
     .option("hoodie.datasource.write.precombine.field", "ts")
     .option("hoodie.datasource.write.partitionpath.field", "dt")
     .options(**options).mode("append").save(path))


def assert_record_index_in_step(path: str) -> None:
    """The record index (RECORD_INDEX tables) names the file group of every key the table holds."""
    t = HudiTable(path)
    held = {r["_hoodie_record_key"]: (r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0])
            for r in t.to_arrow().to_pylist()}
    index = all_locations(MetadataTable.open(t.storage), t.load_timeline())
    assert {k: (loc.partition, loc.file_id) for k, loc in index.items()} == held


# RECORD_INDEX lives in the metadata table, which version 8/9 tables have
VERSION = {"RECORD_INDEX": {"hoodie.write.table.version": "9"}}


@pytest.mark.parametrize("table_type,index", [("COPY_ON_WRITE", "SIMPLE"), ("MERGE_ON_READ", "GLOBAL_SIMPLE"),
                                              ("MERGE_ON_READ", "RECORD_INDEX")])
def test_spark_writes_a_lookup_index_table_from_several_tasks(spark, tmp_path, table_type, index):
    path = str(tmp_path / "t")
    opts = {"hoodie.index.type": index, "hoodie.datasource.write.table.type": table_type, **VERSION.get(index, {})}
    write(spark, path, [(f"k{i}", 1, f"d{i % 2}", "a") for i in range(20)], 3, **opts)
    write(spark, path, [(f"k{i}", 2, f"d{i % 2}", "b") for i in range(10, 30)] * 2, 3, clustered=True, **opts)
    t = HudiTable(path)
    assert t.config.index_type == index and t.config.num_buckets is None
    expected = sorted([(f"k{i}", "a") for i in range(10)] + [(f"k{i}", "b") for i in range(10, 30)], key=repr)
    assert rows(t.to_arrow(), ["id", "v"]) == expected
    assert rows(hudi_rs(path), ["id", "v"]) == expected
    read = spark.read.format("hudi-py").load(path).select("id", "v").collect()
    assert sorted(((r.id, r.v) for r in read), key=repr) == expected
    if index == "RECORD_INDEX":
        assert_record_index_in_step(path)


def test_cluster_by_bucket_sends_each_partition_of_a_new_lookup_index_table_to_one_task(spark, tmp_path):
    """The write options of a SIMPLE-index table not created yet: the table counts as one bucket (not the bucket
    index's default count), so a bulk_insert writes each partition from one task, without log files."""
    path = str(tmp_path / "t")
    opts = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
            "hoodie.datasource.write.partitionpath.field": "dt", "hoodie.index.type": "SIMPLE",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ"}
    data = [(f"k{i}", 1, f"d{i % 2}", "a") for i in range(40)]
    df = cluster_by_bucket(spark.createDataFrame(data, "id string, ts long, dt string, v string").repartition(4),
                           opts, num_partitions=4)
    tasks = df.rdd.glom().map(lambda part: sorted({r.dt for r in part})).collect()
    assert sorted(dt for task in tasks for dt in task) == ["d0", "d1"]
    df.write.format("hudi-py").options(**opts).option("hoodie.datasource.write.operation", "bulk_insert") \
        .mode("append").save(path)
    assert not list((tmp_path / "t").rglob("*.log.*"))
    assert rows(HudiTable(path).to_arrow(), ["id", "v"]) == sorted(((k, v) for k, _, _, v in data), key=repr)



@pytest.mark.parametrize("operation", ["bulk_insert", "insert"])
def test_unclustered_tasks_write_their_new_keys_into_file_groups_of_their_own(spark, tmp_path, operation):
    """Three tasks, each with new keys of both partitions: each makes its own file groups (no key lands in a log
    of a group another task created in the same commit), and the table reads back as written."""
    path = str(tmp_path / "t")
    opts = {"hoodie.index.type": "SIMPLE", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.datasource.write.operation": operation, "hoodie.parquet.small.file.limit": "0"}
    first = [(f"k{i}", 1, f"d{i % 2}", "a") for i in range(30)]
    second = [(f"k{i}", 2, f"d{i % 2}", "b") for i in range(30, 60)]
    write(spark, path, first, 3, **opts)
    write(spark, path, second, 3, **opts)
    assert not list((tmp_path / "t").rglob("*.log.*"))
    groups = {p.name.split("_")[0] for p in (tmp_path / "t").rglob("*.parquet") if ".hoodie" not in p.parts}
    assert len(groups) == 2 * 2 * 3  # two commits, two partitions, three tasks
    expected = sorted(((k, v) for k, _, _, v in first + second), key=repr)
    assert rows(HudiTable(path).to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(path), ["id", "v"])

def test_spark_creates_and_writes_a_timestamp_keyed_table(spark, tmp_path):
    """TimestampBasedKeyGenerator options on a first Spark write: the tasks put rows in the paths Hudi's generator
    makes, the update of a key stays in its partition."""
    path = str(tmp_path / "t")
    opts = {"hoodie.index.type": "SIMPLE",
            "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
            "hoodie.keygen.timebased.timestamp.type": "DATE_STRING",
            "hoodie.keygen.timebased.input.dateformat": "yyyy-MM-dd",
            "hoodie.keygen.timebased.output.dateformat": "yyyy/MM", "hoodie.keygen.timebased.timezone": "UTC"}
    write(spark, path, [(f"k{i}", 1, f"2024-0{1 + i % 2}-15", "a") for i in range(10)], 2, **opts)
    write(spark, path, [(f"k{i}", 2, f"2024-0{1 + i % 2}-15", "b") for i in range(5)], 2, **opts)
    got = {r["id"]: (r["_hoodie_partition_path"], r["v"]) for r in HudiTable(path).to_arrow().to_pylist()}
    assert got == {f"k{i}": (f"2024/0{1 + i % 2}", "b" if i < 5 else "a") for i in range(10)}
    assert rows(hudi_rs(path), ["id", "v"]) == sorted(((k, v) for k, (_, v) in got.items()), key=repr)


def test_a_new_key_in_two_spark_partitions_is_refused(spark, tmp_path):
    path = str(tmp_path / "t")
    write(spark, path, [("a", 1, "d1", "x")], 1, **{"hoodie.index.type": "SIMPLE"})
    with pytest.raises(Exception, match="several Spark partitions"):
        write(spark, path, [("n", 2, "d1", "x"), ("n", 3, "d1", "y")] * 4, 2)
    assert rows(HudiTable(path).to_arrow(), ["id"]) == [("a",)]


@pytest.mark.parametrize("index", ["GLOBAL_BLOOM", "RECORD_INDEX"])
def test_the_streaming_sink_creates_and_writes_a_lookup_index_table(spark, tmp_path, index):
    """Micro-batches over two tasks, keys unique per batch: updates land in the file groups holding the keys."""
    src, path = tmp_path / "src", str(tmp_path / "t")
    src.mkdir()
    batches = [pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 2}" for i in ids],
                         "v": [f"{ts}"] * len(ids)}) for ts, ids in [(1, range(0, 20)), (2, range(10, 30))]]
    for i, b in enumerate(batches):
        pq.write_table(b, src / f"{i:03d}.parquet")
        os.utime(src / f"{i:03d}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))  # Spark reads by mtime
    df = spark.readStream.schema("id string, ts long, dt string, v string").option("maxFilesPerTrigger", 1) \
        .parquet(str(src))
    q = (df.repartition(2).writeStream.format("hudi-py").option("hoodie.datasource.write.recordkey.field", "id")
         .option("hoodie.datasource.write.precombine.field", "ts")
         .option("hoodie.datasource.write.partitionpath.field", "dt").option("hoodie.index.type", index)
         .options(**VERSION.get(index, {}))
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    t = HudiTable(path)
    assert t.config.index_type == index
    expected = sorted([(f"k{i}", "1") for i in range(10)] + [(f"k{i}", "2") for i in range(10, 30)], key=repr)
    assert rows(t.to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(path), ["id", "v"])
    if index == "RECORD_INDEX":
        assert_record_index_in_step(path)
