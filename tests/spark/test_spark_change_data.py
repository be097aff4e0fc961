"""Change data written at commit time, through Spark: the first write turns it on, later writes record it, and the
batch and streaming change-feed reads return what HudiTable.changes() returns."""

from __future__ import annotations

from pathlib import Path

import pytest

from hudi_ds import HudiTable

OPTIONS = {"hoodie.table.name": "cdc", "hoodie.datasource.write.recordkey.field": "id",
           "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "p",
           "hoodie.bucket.index.num.buckets": "2", "hoodie.table.cdc.enabled": "true"}
COLUMNS = ["_change_type", "_hoodie_record_key", "_hoodie_partition_path", "id", "ts", "p", "v", "_commit_time"]


def _rows(rows: list[dict]) -> list[tuple]:
    return sorted(tuple(r[c] for c in COLUMNS) for r in rows)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_spark_writes_change_data_and_reads_it_back(spark, tmp_path, table_type):
    path = str(tmp_path / "t")
    opts = {**OPTIONS, "hoodie.datasource.write.table.type": table_type}

    def write(rows: list[tuple], operation: str = "upsert") -> None:
        df = spark.createDataFrame(rows, "id string, ts long, p string, v double")
        df.write.format("hudi-py").options(**opts).option("hoodie.datasource.write.operation", operation) \
            .mode("append").save(path)

    write([(f"k{i}", 1, str(i % 2), float(i)) for i in range(12)])
    write([("k1", 2, "1", 10.0), ("k2", 2, "0", 20.0), ("k20", 2, "0", 0.5)])
    write([("k3", 3, "1", 0.0)], "delete")
    write([("k2", 1, "0", -1.0)])  # an older version: no change
    t = HudiTable(path)
    assert t.config.cdc_enabled
    assert list(Path(path).rglob(".*-cdc")), "the upsert and the delete recorded their change data"
    first = t.timeline()[0].requested_time
    expected = _rows(t.changes(first).to_pylist())
    kinds = sorted((r[0], r[3]) for r in expected)
    assert kinds == [("delete", "k3"), ("insert", "k20"), ("update_postimage", "k1"), ("update_postimage", "k2"),
                     ("update_preimage", "k1"), ("update_preimage", "k2")]

    batch = (spark.read.format("hudi-py").option("hoodie.datasource.query.type", "incremental")
             .option("hoodie.datasource.query.incremental.format", "cdc")
             .option("hoodie.datasource.read.begin.instanttime", first).load(path))
    assert _rows([r.asDict() for r in batch.collect()]) == expected

    name = f"cdc_stream_{table_type.lower()}"
    stream = (spark.readStream.format("hudi-py").option("hoodie.datasource.query.incremental.format", "cdc")
              .option("read.start-commit", str(int(first) + 1)).load(path))
    query = (stream.writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp_path / name))
             .trigger(availableNow=True).start())
    query.awaitTermination(180)
    streamed = [r.asDict() for r in spark.sql(f"select * from {name}").collect()]
    query.stop()
    assert _rows(streamed) == expected
