"""Spark benchmark: format("hudi-py") against Spark's built-in parquet, one local[2] session.

    ./run py benchmarks/bench_spark.py [--rows 5000000] [--buckets 4] [--master local[2]]

Writes: built-in parquet (partitioned by dt) vs hudi-py bulk_insert, insert (fresh MOR tables) and an upsert of
10% of the keys (vs a built-in parquet write of the same rows). Reads: built-in parquet full scan + a sum over
every column vs a hudi-py snapshot read of the MOR table with its log files. The hudi-py inputs go through
hudi_ds.spark.cluster_by_bucket (its shuffle is part of the timing). Every result is checked: row counts and
a checksum over every data column, so a fast wrong answer cannot pass.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

CHECKSUM = [
    "count(*) AS n", "sum(id) AS id", "sum(xxhash64(name) % 1000003) AS name", "sum(amount) AS amount",
    "sum(ts) AS ts", "sum(xxhash64(dt) % 1000003) AS dt", "sum(flag) AS flag",
]


def source(spark: Any, n: int) -> Any:
    from pyspark import StorageLevel

    df = spark.range(n).selectExpr(
        "id", "concat('name-', cast(id AS STRING)) AS name", "rand(42) * 1000 AS amount", "1L AS ts",
        "concat('2024-01-0', cast(id % 8 + 1 AS STRING)) AS dt", "cast(id % 3 AS INT) AS flag")
    df = df.persist(StorageLevel.MEMORY_ONLY)
    df.count()
    return df


def checksum(df: Any) -> tuple:
    row = df.selectExpr(*CHECKSUM).first()
    return tuple(row)


def same(a: tuple, b: tuple) -> bool:
    return all(math.isclose(x, y, rel_tol=1e-9) if isinstance(x, float) else x == y for x, y in zip(a, b, strict=True))


def timed(fn: Any) -> tuple[float, Any]:
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--write-partitions", type=int, default=0,
                    help="Spark partitions of the clustered hudi-py input (0: 2 per core)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    n = args.rows

    from hudi_ds.spark import cluster_by_bucket, session

    spark = session(master=args.master, app_name="hudi-py-bench",
                    **{"spark.sql.shuffle.partitions": "16", "spark.driver.memory": "4g",
                       "spark.sql.sources.partitionColumnTypeInference.enabled": "false"})
    work = Path(tempfile.mkdtemp(prefix="hudi_py_bench_"))
    opts = {"hoodie.table.name": "bench", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.bucket.index.num.buckets": str(args.buckets)}
    groups = 8 * args.buckets
    parts = args.write_partitions or 2 * spark.sparkContext.defaultParallelism

    def hudi_write(df: Any, path: Path, operation: str) -> None:
        clustered = cluster_by_bucket(df, opts, num_partitions=parts)
        clustered.write.format("hudi-py").options(**opts).option("hoodie.datasource.write.operation", operation) \
            .mode("append").save(str(path))

    def parquet_write(df: Any, path: Path) -> None:
        df.write.mode("overwrite").partitionBy("dt").parquet(str(path))

    try:
        # warm-up: first jobs pay JVM JIT and Python worker start-up
        warm = source(spark, 2000)
        parquet_write(warm, work / "warm_pq")
        hudi_write(warm, work / "warm_hudi", "insert")
        checksum(spark.read.parquet(str(work / "warm_pq")))
        checksum(spark.read.format("hudi-py").load(str(work / "warm_hudi")))
        warm.unpersist()

        base = source(spark, n)
        updates = base.filter("id % 10 = 0").selectExpr(
            "id", "concat(name, '-u') AS name", "amount + 1 AS amount", "2L AS ts", "dt", "flag")
        updates = updates.persist()
        n_upd = updates.count()
        expected_base = checksum(base)
        expected_after = checksum(base.filter("id % 10 <> 0").unionByName(updates))

        results: dict[str, float] = {}
        results["parquet write"], _ = timed(lambda: parquet_write(base, work / "pq"))
        results["hudi bulk_insert"], _ = timed(lambda: hudi_write(base, work / "mor", "bulk_insert"))
        results["hudi insert"], _ = timed(lambda: hudi_write(base, work / "mor_insert", "insert"))
        results["parquet write 10%"], _ = timed(lambda: parquet_write(updates, work / "pq_upd"))
        results["hudi upsert 10%"], _ = timed(lambda: hudi_write(updates, work / "mor", "upsert"))
        results["parquet read+sum"], got_pq = timed(lambda: checksum(spark.read.parquet(str(work / "pq"))))
        results["hudi read+sum"], got_hudi = timed(
            lambda: checksum(spark.read.format("hudi-py").load(str(work / "mor"))))
        got_insert = checksum(spark.read.format("hudi-py").load(str(work / "mor_insert")))

        assert same(got_pq, expected_base), ("parquet", got_pq, expected_base)
        assert same(got_insert, expected_base), ("hudi insert", got_insert, expected_base)
        assert same(got_hudi, expected_after), ("hudi snapshot after upsert", got_hudi, expected_after)
        logs = sum(1 for p in (work / "mor").rglob("*.log.*"))
        assert logs > 0, "the upsert wrote no log files"

        rows_of = {"parquet write 10%": n_upd, "hudi upsert 10%": n_upd}
        baseline = {"hudi bulk_insert": "parquet write", "hudi insert": "parquet write",
                    "hudi upsert 10%": "parquet write 10%", "hudi read+sum": "parquet read+sum"}
        print(f"\nrows={n:,}  updates={n_upd:,}  master={args.master}  buckets/partition={args.buckets}  "
              f"file groups={groups}  log files={logs}")
        print(f"{'step':<22}{'seconds':>10}{'rows/s':>14}{'vs parquet':>12}")
        for name, secs in results.items():
            rows = rows_of.get(name, n)
            ratio = f"{results[baseline[name]] / secs:.2f}x" if name in baseline else ""
            print(f"{name:<22}{secs:>10.2f}{rows / secs:>14,.0f}{ratio:>12}")
        print("checks: row counts and checksums over every column match the source data")
        figures = {
            "bulk_insert_ratio": results["parquet write"] / results["hudi bulk_insert"],
            "insert_ratio": results["parquet write"] / results["hudi insert"],
            "upsert_ratio": results["parquet write 10%"] / results["hudi upsert 10%"],
            "read_ratio": results["parquet read+sum"] / results["hudi read+sum"],
            **{k.replace(" ", "_").replace("%", "pct").replace("+", "_") + "_s": v for k, v in results.items()},
        }
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1))
        return figures
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
