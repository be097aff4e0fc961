"""Merge modes through Spark: the options of the one registry given to df.write.format("hudi-py") and to the
streaming sink create and write the table with that mode, and spark.read merges by it."""

from __future__ import annotations

import os

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark]

COMMIT_TIME = {"hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.table.type": "MERGE_ON_READ",
               "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.write.table.version": "9",
               "hoodie.bucket.index.num.buckets": "2", "compaction.schedule.enabled": "false"}


def batch(ids: list[int], ts: list[int], v: str) -> pa.Table:
    return pa.table({"id": ids, "ts": ts, "v": [f"{v}{i}" for i in ids]})


def test_commit_time_ordering_through_batch_writes_and_the_streaming_sink(spark, tmp_path):
    path, src = str(tmp_path / "t"), tmp_path / "src"
    spark.createDataFrame(batch([1, 2, 3], [9, 9, 9], "a").to_pandas()).write.format("hudi-py") \
        .options(**COMMIT_TIME).mode("append").save(path)
    # later writes carry lower ordering values: under commit-time ordering they win all the same
    spark.createDataFrame(batch([1], [1], "b").to_pandas()).write.format("hudi-py") \
        .options(**COMMIT_TIME).mode("append").save(path)
    src.mkdir()
    for i, b in enumerate([batch([2], [0], "c"), batch([2, 3], [5, 0], "d")]):
        pq.write_table(b, src / f"{i}.parquet")
        os.utime(src / f"{i}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))  # Spark reads by mtime
    stream = spark.readStream.schema("id long, ts long, v string").option("maxFilesPerTrigger", 1).parquet(str(src))
    q = (stream.writeStream.format("hudi-py").options(**COMMIT_TIME)
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    read = spark.read.format("hudi-py").load(path).select("id", "ts", "v").orderBy("id").collect()
    assert [tuple(r) for r in read] == [(1, 1, "b1"), (2, 5, "d2"), (3, 0, "d3")]
    assert HudiTable(path).config.merge_mode == "COMMIT_TIME_ORDERING"


def test_partial_updates_of_different_columns_through_batch_writes_and_the_streaming_sink(spark, tmp_path):
    """Two writers of one wide table, each carrying some columns (a batch job the prices, a stream the stock):
    under KEEP_VALUES each updates its columns and keeps the other's; merge-on-read logs hold partial blocks."""
    path, src = str(tmp_path / "t"), tmp_path / "src"
    options = {**COMMIT_TIME, "hoodie.table.partial.update.mode": "KEEP_VALUES"}
    full = pa.table({"id": [1, 2], "ts": [1, 1], "name": ["a", "b"], "price": [10.0, 20.0], "stock": [5, 6]})
    spark.createDataFrame(full.to_pandas()).write.format("hudi-py").options(**options).mode("append").save(path)
    prices = pa.table({"id": [1, 2], "ts": [2, 2], "price": [11.0, 21.0]})
    spark.createDataFrame(prices.to_pandas()).write.format("hudi-py").options(**options).mode("append").save(path)
    src.mkdir()
    pq.write_table(pa.table({"id": [2], "ts": [3], "stock": [0]}), src / "0.parquet")
    stream = spark.readStream.schema("id long, ts long, stock long").parquet(str(src))
    q = (stream.writeStream.format("hudi-py").options(**options)
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    read = spark.read.format("hudi-py").load(path).select("id", "name", "price", "stock").orderBy("id").collect()
    assert [tuple(r) for r in read] == [(1, "a", 11.0, 5), (2, "b", 21.0, 0)]
    t = HudiTable(path)
    assert t.config.partial_update_mode == "KEEP_VALUES"
    t.compact()  # whole rows in the new base files
    assert sorted(tuple(r.values()) for r in t.to_arrow(columns=["id", "name", "price", "stock"]).to_pylist()) == [
        (1, "a", 11.0, 5), (2, "b", 21.0, 0)]


def test_an_aws_dms_changelog_through_batch_writes_and_the_streaming_sink(spark, tmp_path):
    """An AWS DMS-shaped feed (Op I/U/D) into a table created with AWSDmsAvroPayload: Op=D deletes, through
    df.write and the streaming sink, with no other option; `_hoodie_is_deleted` deletes too."""
    path, src = str(tmp_path / "t"), tmp_path / "src"
    options = {"hoodie.table.name": "dms", "hoodie.datasource.write.recordkey.field": "id",
               "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "9",
               "hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.AWSDmsAvroPayload",
               "hoodie.bucket.index.num.buckets": "2"}
    first = pa.table({"id": [1, 2, 3, 4], "ts": [1, 1, 1, 1], "Op": ["I", "I", "I", "I"],
                      "_hoodie_is_deleted": [False] * 4})
    spark.createDataFrame(first.to_pandas()).write.format("hudi-py").options(**options).mode("append").save(path)
    src.mkdir()
    feed = pa.table({"id": [1, 2, 4], "ts": [2, 2, 2], "Op": ["U", "D", "U"], "_hoodie_is_deleted": [False, False, True]})
    pq.write_table(feed, src / "0.parquet")
    stream = spark.readStream.schema("id long, ts long, Op string, _hoodie_is_deleted boolean").parquet(str(src))
    q = (stream.writeStream.format("hudi-py").option("checkpointLocation", str(tmp_path / "ck"))
         .trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    read = spark.read.format("hudi-py").load(path).select("id", "ts", "Op").orderBy("id").collect()
    assert [tuple(r) for r in read] == [(1, 2, "U"), (3, 1, "I")]
    config = HudiTable(path).config
    assert (config.merge_mode, config.delete_field, config.delete_marker) == ("COMMIT_TIME_ORDERING", "Op", "D")


def test_first_value_through_batch_writes_and_spark_reads(spark, tmp_path):
    """FirstValueAvroPayload: an equal ordering value keeps the stored record (log versions of a merge-on-read
    table, read back by spark.read), a higher one replaces it."""
    path = str(tmp_path / "t")
    options = {**{k: v for k, v in COMMIT_TIME.items() if k != "hoodie.record.merge.mode"},
               "hoodie.datasource.write.payload.class": "FirstValueAvroPayload"}
    for b in (batch([1, 2], [5, 5], "a"), batch([1, 2], [5, 6], "b"), batch([1, 2], [5, 6], "c")):
        spark.createDataFrame(b.to_pandas()).write.format("hudi-py").options(**options).mode("append").save(path)
    read = spark.read.format("hudi-py").load(path).select("id", "ts", "v").orderBy("id").collect()
    assert [tuple(r) for r in read] == [(1, 5, "a1"), (2, 6, "b2")]
    assert HudiTable(path).config.first_value
