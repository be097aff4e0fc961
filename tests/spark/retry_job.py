"""Batch writes on master local[2,3] (up to three attempts per task) where the first data file written in each
write fails its task once, so Spark retries that task: run in a subprocess by
tests/spark/test_spark_concurrency.py (the shared test session, local[2], never retries a task).

usage: retry_job.py ROOT   -- writes ROOT/MERGE_ON_READ and ROOT/COPY_ON_WRITE; ROOT/fail-* hold the fault markers
"""

from __future__ import annotations

import os
import sys

import pyarrow as pa

OPTS = {"hoodie.table.name": "retry_t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.bucket.index.num.buckets": "2"}
# (ids, ts, tasks): one task creating every bucket, then three unclustered tasks updating old buckets and
# creating the buckets of partition "d"
WRITES = [(range(0, 40), 1, 1), (range(20, 90), 2, 3)]


def data(ids: range, ts: int) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "v": [f"v{i}-{ts}" for i in ids],
                     "dt": ["abc"[i % 3] if i < 60 else "d" for i in ids]})


def main(root: str) -> None:
    from hudi_ds.spark import register, session

    spark = session(master="local[2,3]", app_name="hudi-py-retry", **{
        "spark.ui.enabled": "false", "spark.sql.shuffle.partitions": "4", "spark.default.parallelism": "2"})
    env = spark.sparkContext.environment
    for table_type in ("MERGE_ON_READ", "COPY_ON_WRITE"):
        for step, (ids, ts, tasks) in enumerate(WRITES):
            folder = os.path.join(root, f"fail-{table_type}-{step}")
            os.makedirs(folder)
            env["HUDI_DS_FAIL_AFTER_FILES"] = "0"  # the first data file fails its task ...
            env["HUDI_DS_FAIL_ONCE_DIR"] = folder  # ... once: the retry runs through
            register(spark)  # Python workers of the re-registered source see the new environment
            df = spark.createDataFrame(data(ids, ts)).repartition(tasks)
            df.write.format("hudi-py").options(**OPTS).option("hoodie.datasource.write.table.type", table_type) \
                .mode("append").save(os.path.join(root, table_type))
    spark.stop()


if __name__ == "__main__":
    main(sys.argv[1])
