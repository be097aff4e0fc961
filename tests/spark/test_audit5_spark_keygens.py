"""Audit round 2 (issue 28): Spark writes (`df.write.format("hudi-py")`) into global lookup-index tables with
complex and timestamp-based key generators: keys move between partitions when the new row's ordering value is not
below the held one's (and stay where they are otherwise), the paths are the key generator's; our reader, Spark's
and hudi-rs read the same rows."""

from __future__ import annotations

import os
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.spark import cluster_by_bucket

pytestmark = [pytest.mark.spark]
P = "hoodie.keygen.timebased."
H0, H1 = 1705311000000, 1705367700000  # 2024/01/15/09 and 2024/01/16/01 (UTC)


def write(spark: Any, path: str, data: list[tuple[Any, ...]], schema: str, options: dict[str, str],
          clustered: bool) -> None:
    df = spark.createDataFrame(data, schema).repartition(2)
    if clustered:  # a write of a lookup-index table places each key's rows in one task
        df = cluster_by_bucket(df, path)
    df.write.format("hudi-py").options(**options).mode("append").save(path)


@pytest.mark.parametrize("index,table_type", [("GLOBAL_BLOOM", "MERGE_ON_READ"), ("GLOBAL_SIMPLE", "COPY_ON_WRITE"),
                                              ("RECORD_INDEX", "MERGE_ON_READ")])
def test_spark_moves_keys_of_complex_and_timestamp_keyed_tables(spark, tmp_path, index, table_type):
    common = {"hoodie.index.type": index, "hoodie.datasource.write.table.type": table_type,
              "hoodie.datasource.write.precombine.field": "ts", "hoodie.write.table.version": "9",
              "hoodie.simple.index.update.partition.path": "true", "hoodie.bloom.index.update.partition.path": "true",
              "hoodie.record.index.update.partition.path": "true"}
    complex_opts = {**common, "hoodie.datasource.write.recordkey.field": "a,b",
                    "hoodie.datasource.write.partitionpath.field": "region,dt",
                    "hoodie.datasource.write.hive_style_partitioning": "true"}
    stamp_opts = {**common, "hoodie.datasource.write.recordkey.field": "id",
                  "hoodie.datasource.write.partitionpath.field": "at",
                  "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                  P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd/HH",
                  P + "timezone": "UTC"}
    cplx, stamp = str(tmp_path / "complex"), str(tmp_path / "stamp")
    schema = "a string, b long, region string, dt string, ts long, v string"
    write(spark, cplx, [("x", i, "eu", "d1", 5, "v1") for i in range(4)], schema, complex_opts, False)
    # b=0 newer: moves to us/d2; b=1 older: stays in eu/d1; b=2 equal: moves; b=9 new
    write(spark, cplx, [("x", 0, "us", "d2", 6, "v2"), ("x", 1, "us", "d2", 4, "v2"), ("x", 2, "eu", "d2", 5, "v2"),
                        ("x", 9, "eu", "d1", 1, "v2")], schema, complex_opts, True)
    want = sorted([("x", 0, "us", "d2", 6, "v2", "region=us/dt=d2"), ("x", 1, "eu", "d1", 5, "v1", "region=eu/dt=d1"),
                   ("x", 2, "eu", "d2", 5, "v2", "region=eu/dt=d2"), ("x", 3, "eu", "d1", 5, "v1", "region=eu/dt=d1"),
                   ("x", 9, "eu", "d1", 1, "v2", "region=eu/dt=d1")], key=repr)
    columns = ["a", "b", "region", "dt", "ts", "v", "_hoodie_partition_path"]
    assert rows(HudiTable(cplx).to_arrow(), columns) == want == rows(hudi_rs(cplx), columns)
    assert HudiTable(cplx).to_arrow()["_hoodie_record_key"].to_pylist().count("a:x,b:0") == 1

    schema = "id string, at long, ts long, v string"
    write(spark, stamp, [("k1", H0, 5, "v1"), ("k2", H0, 5, "v1"), ("k3", H1, 5, "v1")], schema, stamp_opts, False)
    write(spark, stamp, [("k1", H1, 6, "v2"), ("k2", H1, 4, "v2"), ("k3", H0, 7, "v2")], schema, stamp_opts, True)
    want = sorted([("k1", H1, 6, "v2", "2024/01/16/01"), ("k2", H0, 5, "v1", "2024/01/15/09"),
                   ("k3", H0, 7, "v2", "2024/01/15/09")], key=repr)
    columns = ["id", "at", "ts", "v", "_hoodie_partition_path"]
    assert rows(HudiTable(stamp).to_arrow(), columns) == want
    read = spark.read.format("hudi-py").load(stamp).select(*columns).collect()
    assert sorted((tuple(r) for r in read), key=repr) == want
    assert rows(hudi_rs(stamp), ["id", "ts", "v", "_hoodie_partition_path"]) == [r[:1] + r[2:] for r in want]


def test_the_streaming_sink_moves_timestamp_keys_of_a_global_merge_on_read_table(spark, tmp_path):
    """Micro-batches whose ordering values fall as well as rise: a key moves to the hour of a newer row only."""
    src, path = tmp_path / "src", str(tmp_path / "t")
    src.mkdir()
    batches = [[(f"k{i}", H0, 5) for i in range(10)],
               [(f"k{i}", H1, 6) for i in range(5)] + [(f"k{i}", H1, 4) for i in range(5, 8)],
               [("k0", H0, 3), ("k8", H1, 9), ("k10", H1, 1)]]
    held: dict[str, tuple[int, int, str]] = {}
    for n, batch in enumerate(batches):
        pq.write_table(pa.table({"id": [b[0] for b in batch], "at": pa.array([b[1] for b in batch], pa.int64()),
                                 "ts": pa.array([b[2] for b in batch], pa.int64()), "v": [f"b{n}"] * len(batch)}),
                       src / f"{n:03d}.parquet")
        os.utime(src / f"{n:03d}.parquet", (1_700_000_000 + n, 1_700_000_000 + n))  # Spark reads by mtime
        for key, at, ts in batch:
            if key not in held or ts >= held[key][1]:
                held[key] = (at, ts, f"b{n}")
    df = spark.readStream.schema("id string, at long, ts long, v string").option("maxFilesPerTrigger", 1) \
        .parquet(str(src))
    q = (df.repartition(2).writeStream.format("hudi-py")
         .options(**{"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
                     "hoodie.datasource.write.partitionpath.field": "at", "hoodie.index.type": "GLOBAL_SIMPLE",
                     "hoodie.datasource.write.table.type": "MERGE_ON_READ",
                     "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                     P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": "yyyy/MM/dd/HH",
                     P + "timezone": "UTC", "checkpointLocation": str(tmp_path / "ck")})
         .trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    hour = {H0: "2024/01/15/09", H1: "2024/01/16/01"}
    want = sorted([(k, ts, v, hour[at]) for k, (at, ts, v) in held.items()], key=repr)
    columns = ["id", "ts", "v", "_hoodie_partition_path"]
    assert rows(HudiTable(path).to_arrow(), columns) == want == rows(hudi_rs(path), columns)
