"""A Spark job written for Apache Hudi 0.14 (hoodie.cleaner.* keys, Hive sync, clustering, parallelism) runs on
format("hudi-py") unchanged: the keys of features hudi-py does not implement are ignored where that cannot change
the data, the cleaning policy it asks for is applied after each batch and each micro-batch of the streaming
sink, and a key whose absence would change the data fails naming the feature, with nothing written."""

from __future__ import annotations

import os
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.files.naming import parse_base_file

pytestmark = [pytest.mark.spark, pytest.mark.interop]

COLS = ["id", "ts", "dt", "v"]
HUDI_014_JOB = {
    "hoodie.table.name": "orders", "hoodie.datasource.write.recordkey.field": "id",
    "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
    "hoodie.datasource.write.table.type": "COPY_ON_WRITE", "hoodie.datasource.write.operation": "upsert",
    "hoodie.datasource.write.hive_style_partitioning": "true",
    "hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.mode": "hms",
    "hoodie.datasource.hive_sync.database": "lake", "hoodie.datasource.hive_sync.table": "orders",
    "hoodie.datasource.hive_sync.partition_fields": "dt",
    "hoodie.datasource.hive_sync.partition_extractor_class": "org.apache.hudi.hive.MultiPartKeysValueExtractor",
    "hoodie.clustering.inline": "true", "hoodie.clustering.inline.max.commits": "4",
    "hoodie.clustering.plan.strategy.sort.columns": "id",
    "hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": "1",
    "hoodie.cleaner.policy.failed.writes": "EAGER", "hoodie.keep.min.commits": "20", "hoodie.keep.max.commits": "30",
    "hoodie.parquet.max.file.size": str(128 << 20), "hoodie.parquet.small.file.limit": str(100 << 20),
    "hoodie.upsert.shuffle.parallelism": "8", "hoodie.insert.shuffle.parallelism": "8",
    "hoodie.datasource.write.row.writer.enable": "true", "hoodie.embed.timeline.server": "false",
    "hoodie.metadata.enable": "false", "hoodie.bucket.index.num.buckets": "2",
}


def data(ids: range, ts: int) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 2}" for i in ids],
                     "v": [float(i * ts) for i in ids]})


def versions_per_group(path: str) -> dict[tuple[str, str], int]:
    out: dict[tuple[str, str], int] = {}
    for p in Path(path).rglob("*.parquet"):
        rel = p.relative_to(path).as_posix()
        base = parse_base_file(*rel.rsplit("/", 1))
        if base is not None:
            out[(base.partition, base.file_id)] = out.get((base.partition, base.file_id), 0) + 1
    return out


def latest(batches: list[pa.Table]) -> list[tuple]:
    final: dict[str, dict] = {}
    for b in batches:
        for r in b.to_pylist():
            final[r["id"]] = r
    return sorted((tuple(r[c] for c in COLS) for r in final.values()), key=repr)


def test_a_hudi_014_job_writes_and_cleans_by_its_policy(spark, tmp_path):
    path = str(tmp_path / "orders")
    batches = [data(range(40), 1), data(range(0, 40, 3), 2), data(range(1, 40, 4), 3)]
    for b in batches:
        spark.createDataFrame(b).coalesce(1).write.format("hudi-py").options(**HUDI_014_JOB).mode("append").save(path)
        assert set(versions_per_group(path).values()) == {1}  # KEEP_LATEST_FILE_VERSIONS, 1 version
    t = HudiTable(path)
    assert rows(t.to_arrow(), COLS) == latest(batches) == rows(hudi_rs(path), COLS)
    cleans = [i for i in t.timeline() if i.action == "clean" and i.is_completed]
    assert len(cleans) == 2


def test_a_key_that_would_change_the_data_fails_naming_the_feature(spark, tmp_path):
    path = str(tmp_path / "orders")
    occ = {**HUDI_014_JOB, "hoodie.write.concurrency.mode": "optimistic_concurrency_control",
           "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.InProcessLockProvider"}
    with pytest.raises(Exception) as err:
        spark.createDataFrame(data(range(4), 1)).write.format("hudi-py").options(**occ).mode("append").save(path)
    assert "multi-writer concurrency control" in str(err.value)
    assert not os.path.exists(path) or not any(Path(path).rglob("*.parquet"))


def test_the_streaming_sink_cleans_by_the_policy(spark, tmp_path):
    src, path = tmp_path / "src", str(tmp_path / "orders")
    src.mkdir()
    batches = [data(range(40), 1), data(range(0, 40, 2), 2), data(range(1, 40, 3), 3)]
    for i, b in enumerate(batches):
        pq.write_table(b, src / f"{i:03d}.parquet")
        os.utime(src / f"{i:03d}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))  # Spark reads by mtime
    stream = spark.readStream.schema(spark.createDataFrame(batches[0]).schema).option("maxFilesPerTrigger", 1)
    query = (stream.parquet(str(src)).writeStream.format("hudi-py").options(**HUDI_014_JOB)
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(path))
    query.awaitTermination()
    assert query.exception() is None
    assert set(versions_per_group(path).values()) == {1}
    t = HudiTable(path)
    assert rows(t.to_arrow(), COLS) == latest(batches) == rows(hudi_rs(path), COLS)
    plans = [i for i in t.timeline() if i.action == "clean" and i.is_completed]
    assert len(plans) == 2 and len([i for i in t.timeline() if i.action == "commit"]) == 3
