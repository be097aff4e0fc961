"""Spark benchmark: format("hudi-py") against Spark's built-in parquet, one local[2] session.

    ./run py benchmarks/bench_spark.py [--rows 5000000] [--buckets 4] [--master local[2]]

Writes: built-in parquet (partitioned by dt) vs hudi-py bulk_insert, insert (fresh MOR tables) and an upsert of
10% of the keys (vs a built-in parquet write of the same rows), also into a merge-on-read table created with
Apache Hudi's SIMPLE index (`hoodie.index.type=SIMPLE`: tagging reads the keys of the partitions the upsert touches,
on the executors; its input clustered by partition with cluster_by_bucket). Reads: built-in parquet full scan + a sum over
every column vs a hudi-py snapshot read of the MOR table with its log files, and vs hudi_ds.spark.read_table of the
table written by insert (base files only, as after a compaction: Spark's own parquet scan of its base files); the
incremental read and the change feed (cdc format) of the upsert commit vs a parquet read of the same rows. The
hudi-py inputs go through hudi_ds.spark.cluster_by_bucket (its shuffle is part of the timing); bulk_insert and the
upsert also run on the input as it is (each task then writes every file group it has rows for: a base file, or a
log file beside another task's).
The API floor (benchmarks/api_floor.py) is timed in the same session: a Python source that only hands Spark the
Arrow batches of parquet files, and a Python sink that discards what it gets. Every result is checked: row
counts and a checksum over every data column, so a fast wrong answer cannot pass. The reads run in rounds
(--read-rounds, default 3), one of each per round, and report their medians; so do the writes the goals compare
(--write-rounds, default 3: the built-in parquet write, bulk_insert clustered and as is, and the floor sink fed
the input as is and clustered; each round writes new tables). Memory: the peak RSS of pyspark's
Python workers (sampled) during the largest write (bulk_insert) and read (snapshot), and over the whole run.
"""

from __future__ import annotations

import argparse
import json
import math
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from contextlib import AbstractContextManager, nullcontext
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
import api_floor  # noqa: E402
from common import SparkMemory, memory_figures, step_memory, timed  # noqa: E402

CHECKSUM = [
    "count(*) AS n", "sum(id) AS id", "sum(xxhash64(name) % 1000003) AS name", "sum(amount) AS amount",
    "sum(ts) AS ts", "sum(xxhash64(dt) % 1000003) AS dt", "sum(flag) AS flag",
]


# step -> figure-name stem of its ratio to its baseline (benchmarks/run.py reads these figures)
RATIO_KEYS = {
    "hudi bulk_insert": "bulk_insert", "hudi insert": "insert", "hudi bulk_insert, as is": "bulk_insert_as_is",
    "hudi upsert 10%": "upsert", "hudi upsert 10%, as is": "upsert_as_is", "hudi read+sum": "read",
    "hudi bulk_insert, simple": "bulk_insert_simple", "hudi upsert 10%, simple": "upsert_simple",
    "hudi read_table+sum": "read_table",
    "hudi read+sum, schema": "read_columns", "floor sink": "floor_sink", "floor sink, clustered": "floor_sink_clustered",
    "floor source": "floor_source", "floor source, data columns": "floor_source_columns",
    "hudi incremental 10%": "incremental", "hudi cdc 10%": "cdc",
}


# issue 16: Spark's own scan of the base files of a table without log files, vs the built-in parquet read
READ_TABLE_GOAL = 0.8
# issue 28: an upsert into a SIMPLE-index table vs the built-in parquet writer of the same rows
UPSERT_SIMPLE_GOAL = 0.5
# issue 32: bulk_insert clustered by bucket vs the no-op sink fed the same clustered input, and as is vs the built-in
# parquet write, as medians
BULK_INSERT_GOAL = 0.9


def start_session(master: str) -> Any:
    from hudi_ds.spark import session

    return session(master=master, app_name="hudi-py-bench",
                   **{"spark.sql.shuffle.partitions": "16", "spark.driver.memory": "4g",
                      "spark.sql.sources.partitionColumnTypeInference.enabled": "false"})


def hudi_options(buckets: int) -> dict[str, str]:
    return {"hoodie.table.name": "bench", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ",
            "hoodie.bucket.index.num.buckets": str(buckets)}


def source(spark: Any, n: int) -> Any:
    from pyspark import StorageLevel

    df = spark.range(n).selectExpr(
        "id", "concat('name-', cast(id AS STRING)) AS name", "rand(42) * 1000 AS amount", "1L AS ts",
        "concat('2024-01-0', cast(id % 8 + 1 AS STRING)) AS dt", "cast(id % 3 AS INT) AS flag")
    df = df.persist(StorageLevel.MEMORY_ONLY)
    df.count()
    return df


def updates_of(base: Any) -> Any:
    """Every tenth key with new values and a higher ordering value (persisted)."""
    updates = base.filter("id % 10 = 0").selectExpr(
        "id", "concat(name, '-u') AS name", "amount + 1 AS amount", "2L AS ts", "dt", "flag").persist()
    updates.count()
    return updates


def checksum(df: Any) -> tuple:
    row = df.selectExpr(*CHECKSUM).first()
    return tuple(row)


def same(a: tuple, b: tuple) -> bool:
    return all(math.isclose(x, y, rel_tol=1e-9) if isinstance(x, float) else x == y for x, y in zip(a, b, strict=True))


def hudi_write(df: Any, path: Path, operation: str, opts: dict[str, str], parts: int) -> None:
    from hudi_ds.spark import cluster_by_bucket

    clustered = cluster_by_bucket(df, opts, num_partitions=parts)
    clustered.write.format("hudi-py").options(**opts).option("hoodie.datasource.write.operation", operation) \
        .mode("append").save(str(path))


def simple_index_options(opts: dict[str, str]) -> dict[str, str]:
    """The benchmark's table options with Apache Hudi's SIMPLE index instead of buckets."""
    return {**{k: v for k, v in opts.items() if k != "hoodie.bucket.index.num.buckets"}, "hoodie.index.type": "SIMPLE"}


def simple_upsert(df: Any, path: Path, opts: dict[str, str], parts: int) -> None:
    """An upsert into the SIMPLE-index table at `path`, its input clustered by partition (a key in one task)."""
    from hudi_ds.spark import cluster_by_bucket

    cluster_by_bucket(df, str(path), num_partitions=parts).write.format("hudi-py").options(**opts) \
        .option("hoodie.datasource.write.operation", "upsert").mode("append").save(str(path))


def hudi_read(spark: Any, path: Path, **options: str) -> Any:
    return spark.read.format("hudi-py").options(**options).load(str(path))


def hudi_read_table(spark: Any, path: Path) -> Any:
    """hudi_ds.spark.read_table: Spark's own parquet scan of the slices without log files, the source for the rest."""
    from hudi_ds.spark import read_table

    return read_table(spark, str(path))


def parquet_write(df: Any, path: Path) -> None:
    df.write.mode("overwrite").partitionBy("dt").parquet(str(path))


def floor_write(df: Any, work: Path) -> int:
    """Hand `df` to the API floor's Python sink; the number of rows it received."""
    df.write.format("hudi-py-floor-sink").mode("append").save(str(work / "floor_count"))
    return int((work / "floor_count").read_text())


def floor_read(spark: Any, table: Path, columns: str = "") -> Any:
    return (spark.read.format("hudi-py-floor").option("files", json.dumps(api_floor.source_files(table)))
            .option("columns", columns).option("partitions", str(spark.sparkContext.defaultParallelism)).load())


CDC = {"hoodie.datasource.query.incremental.format": "cdc"}


def read_steps(spark: Any, work: Path) -> dict[str, Callable[[], tuple]]:
    """The reads compared with each other, each a full scan with a checksum over every data column."""
    data_columns = "id long, name string, amount double, ts long, dt string, flag int"
    return {
        "parquet read+sum": lambda: checksum(spark.read.parquet(str(work / "pq"))),
        "hudi read_table+sum": lambda: checksum(hudi_read_table(spark, work / "mor_insert")),
        "hudi read+sum": lambda: checksum(hudi_read(spark, work / "mor")),
        "hudi read+sum, schema": lambda: checksum(
            spark.read.format("hudi-py").schema(data_columns).load(str(work / "mor"))),
        "floor source": lambda: checksum(floor_read(spark, work / "mor")),
        "floor source, data columns": lambda: checksum(floor_read(spark, work / "mor", "id,name,amount,ts,dt,flag")),
    }


def interleaved_medians(steps: dict[str, Callable[[], Any]], rounds: int, results: dict[str, float],
                        measured: dict[str, Callable[[], AbstractContextManager[None]]],
                        before_round: Callable[[], None] | None = None) -> dict[str, Any]:
    """Time every step once per round, round after round, and put each step's median seconds in `results`; a
    single Spark step moves by 20-40% between runs, and a slow minute of the machine slows every step of its
    round alike instead of one step's whole sample. The first round of a step in `measured` runs inside its
    context (a memory measurement); `before_round` runs untimed before each round (writes remove the tables of
    the round before). Returns each step's last result."""
    seconds: dict[str, list[float]] = {name: [] for name in steps}
    last: dict[str, Any] = {}
    for r in range(rounds):
        if before_round is not None:
            before_round()
        for name, step in steps.items():
            with measured[name]() if r == 0 and name in measured else nullcontext():
                secs, last[name] = timed(step)
            seconds[name].append(secs)
    results.update({name: statistics.median(s) for name, s in seconds.items()})
    return last


def last_commit(path: Path) -> dict[str, str]:
    """Read options of an incremental query of a table's second commit (the upsert after the load)."""
    from hudi_ds import HudiTable

    load, upsert = [i.requested_time for i in HudiTable(str(path)).timeline() if i.is_completed]
    return {"hoodie.datasource.query.type": "incremental", "hoodie.datasource.read.begin.instanttime": load,
            "hoodie.datasource.read.end.instanttime": upsert}


def warm_up(spark: Any, work: Path, opts: dict[str, str], parts: int, rows: int) -> None:
    """The first jobs pay JVM JIT (the built-in parquet writer's first 5M rows take twice as long as its next)
    and Python worker start-up: run each kind once on a tenth of the rows (at most 500k), the upsert and the
    incremental and change-feed reads included."""
    api_floor.register(spark)
    warm = source(spark, max(2000, min(rows // 10, 500_000)))
    parquet_write(warm, work / "warm_pq")
    hudi_write(warm, work / "warm_hudi", "insert", {**opts, "hoodie.table.cdc.enabled": "true"}, parts)
    warm_updates = updates_of(warm)
    hudi_write(warm_updates, work / "warm_hudi", "upsert", opts, parts)
    simple = simple_index_options(opts)
    hudi_write(warm, work / "warm_simple", "bulk_insert", simple, parts)
    simple_upsert(warm_updates, work / "warm_simple", simple, parts)
    floor_write(warm, work)
    checksum(spark.read.parquet(str(work / "warm_pq")))
    checksum(hudi_read(spark, work / "warm_hudi"))
    checksum(hudi_read_table(spark, work / "warm_hudi"))
    checksum(floor_read(spark, work / "warm_hudi"))
    incremental = last_commit(work / "warm_hudi")
    checksum(hudi_read(spark, work / "warm_hudi", **incremental))
    checksum(hudi_read(spark, work / "warm_hudi", **incremental, **CDC))  # the change-feed path (and polars)
    warm_updates.unpersist()
    warm.unpersist()


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=5_000_000)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--master", default="local[2]")
    ap.add_argument("--write-partitions", type=int, default=0,
                    help="Spark partitions of the clustered hudi-py input (0: 2 per core)")
    ap.add_argument("--read-rounds", type=int, default=3, help="rounds of the read steps (their medians are reported)")
    ap.add_argument("--write-rounds", type=int, default=3,
                    help="rounds of the writes the goals compare (their medians are reported)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    n = args.rows

    from hudi_ds.spark import cluster_by_bucket

    spark = start_session(args.master)
    work = Path(tempfile.mkdtemp(prefix="hudi_py_bench_"))
    opts = hudi_options(args.buckets)
    opts_cdc = {**opts, "hoodie.table.cdc.enabled": "true"}
    groups = 8 * args.buckets
    parts = args.write_partitions or 2 * spark.sparkContext.defaultParallelism
    try:
        with SparkMemory() as mem:
            warm_up(spark, work, opts, parts, n)
            base = source(spark, n)
            updates = updates_of(base)
            n_upd = updates.count()
            expected_base = checksum(base)
            expected_after = checksum(base.filter("id % 10 <> 0").unionByName(updates))
            expected_upd, expected_pre = checksum(updates), checksum(base.filter("id % 10 = 0"))

            results: dict[str, float] = {}
            figures: dict[str, float] = {}
            writes = {
                "parquet write": lambda: parquet_write(base, work / "pq"),
                "hudi bulk_insert": lambda: hudi_write(base, work / "mor", "bulk_insert", opts, parts),
                "hudi bulk_insert, as is": lambda: base.write.format("hudi-py").options(**opts).option(
                    "hoodie.datasource.write.operation", "bulk_insert").mode("append").save(str(work / "mor_as_is")),
                "floor sink": lambda: floor_write(base, work),
                "floor sink, clustered": lambda: floor_write(cluster_by_bucket(base, opts, num_partitions=parts), work),
            }

            def new_tables() -> None:
                for name in ("pq", "mor", "mor_as_is"):
                    shutil.rmtree(work / name, ignore_errors=True)

            written = interleaved_medians(
                writes, args.write_rounds, results,
                measured={"hudi bulk_insert": lambda: step_memory(figures, "bulk_insert", mem)}, before_round=new_tables)
            floor_rows, floor_rows_c = written["floor sink"], written["floor sink, clustered"]
            # this table also writes change data at commit time (hoodie.table.cdc.enabled): its insert writes none
            results["hudi insert"], _ = timed(lambda: hudi_write(base, work / "mor_insert", "insert", opts_cdc, parts))
            results["parquet write 10%"], _ = timed(lambda: parquet_write(updates, work / "pq_upd"))
            results["hudi upsert 10%"], _ = timed(lambda: hudi_write(updates, work / "mor", "upsert", opts, parts))
            results["hudi upsert 10%, as is"], _ = timed(lambda: updates.write.format("hudi-py").options(**opts).option(
                "hoodie.datasource.write.operation", "upsert").mode("append").save(str(work / "mor_as_is")))
            simple = simple_index_options(opts)
            results["hudi bulk_insert, simple"], _ = timed(
                lambda: hudi_write(base, work / "mor_simple", "bulk_insert", simple, parts))
            results["hudi upsert 10%, simple"], _ = timed(
                lambda: simple_upsert(updates, work / "mor_simple", simple, parts))
            reads = interleaved_medians(read_steps(spark, work), args.read_rounds, results,
                                        measured={"hudi read+sum": lambda: step_memory(figures, "read", mem)})
            got_pq, got_read_table, got_hudi, got_cols, got_floor, got_floor_cols = reads.values()
            results["parquet read+sum 10%"], got_pq_upd = timed(
                lambda: checksum(spark.read.parquet(str(work / "pq_upd"))))
            incremental = last_commit(work / "mor")
            results["hudi incremental 10%"], got_inc = timed(
                lambda: checksum(hudi_read(spark, work / "mor", **incremental)))
            cdc = hudi_read(spark, work / "mor", **incremental, **CDC)
            results["hudi cdc 10%"], got_cdc = timed(lambda: checksum(cdc))
            got_insert = checksum(hudi_read(spark, work / "mor_insert"))
            results["hudi upsert 10%, change data"], _ = timed(
                lambda: hudi_write(updates, work / "mor_insert", "upsert", opts_cdc, parts))
            incremental_c = last_commit(work / "mor_insert")
            results["hudi incremental 10%, cdc table"], _ = timed(
                lambda: checksum(hudi_read(spark, work / "mor_insert", **incremental_c)))
            cdc_c = hudi_read(spark, work / "mor_insert", **incremental_c, **CDC)
            results["hudi cdc 10%, change data"], got_cdc_c = timed(lambda: checksum(cdc_c))
            got_as_is = checksum(hudi_read(spark, work / "mor_as_is"))  # bulk_insert and upsert, as is
            got_simple = checksum(hudi_read(spark, work / "mor_simple"))

            assert same(got_pq, expected_base), ("parquet", got_pq, expected_base)
            assert same(got_pq_upd, expected_upd), ("parquet 10%", got_pq_upd, expected_upd)
            assert same(got_insert, expected_base), ("hudi insert", got_insert, expected_base)
            assert same(got_read_table, expected_base), ("hudi read_table", got_read_table, expected_base)
            assert same(got_as_is, expected_after), ("hudi bulk_insert + upsert, as is", got_as_is, expected_after)
            assert same(got_simple, expected_after), ("hudi SIMPLE index upsert", got_simple, expected_after)
            assert floor_rows == floor_rows_c == n, ("floor sink", floor_rows, floor_rows_c)
            assert same(got_floor, expected_base) and same(got_floor_cols, expected_base), ("floor source", got_floor)
            assert same(got_hudi, expected_after), ("hudi snapshot after upsert", got_hudi, expected_after)
            assert same(got_cols, expected_after), ("hudi snapshot, data columns", got_cols, expected_after)
            assert same(got_inc, expected_upd), ("hudi incremental", got_inc, expected_upd)
            assert same(got_cdc_c, got_cdc), ("cdc read of change data", got_cdc_c, got_cdc)
            post = checksum(cdc.filter("_change_type = 'update_postimage'"))
            pre = checksum(cdc.filter("_change_type = 'update_preimage'"))
            assert got_cdc[0] == 2 * n_upd and same(post, expected_upd) and same(pre, expected_pre), \
                ("hudi cdc", got_cdc, post, pre)
            logs = sum(1 for p in (work / "mor").rglob("*.log.*"))
            assert logs > 0, "the upsert wrote no log files"
        figures.update(memory_figures(mem))
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)

    rows_of = {"parquet write 10%": n_upd, "hudi upsert 10%": n_upd, "hudi upsert 10%, as is": n_upd, "parquet read+sum 10%": n_upd,
               "hudi upsert 10%, simple": n_upd,
               "hudi incremental 10%": n_upd, "hudi cdc 10%": 2 * n_upd, "hudi upsert 10%, change data": n_upd,
               "hudi incremental 10%, cdc table": n_upd, "hudi cdc 10%, change data": 2 * n_upd}
    baseline = {"hudi bulk_insert": "parquet write", "hudi insert": "parquet write",
                "hudi bulk_insert, as is": "parquet write", "floor sink": "parquet write",
                "floor sink, clustered": "parquet write", "hudi upsert 10%": "parquet write 10%",
                "hudi upsert 10%, as is": "parquet write 10%",
                "hudi bulk_insert, simple": "parquet write", "hudi upsert 10%, simple": "parquet write 10%",
                "hudi read+sum": "parquet read+sum", "hudi read+sum, schema": "parquet read+sum",
                "hudi read_table+sum": "parquet read+sum",
                "floor source": "parquet read+sum", "floor source, data columns": "parquet read+sum",
                "hudi incremental 10%": "parquet read+sum 10%", "hudi cdc 10%": "parquet read+sum 10%",
                "hudi upsert 10%, change data": "parquet write 10%",
                "hudi incremental 10%, cdc table": "parquet read+sum 10%",
                "hudi cdc 10%, change data": "parquet read+sum 10%"}
    floor = {"hudi bulk_insert": "floor sink, clustered", "hudi insert": "floor sink, clustered",
             "hudi bulk_insert, as is": "floor sink", "hudi read+sum": "floor source",
             "hudi read+sum, schema": "floor source, data columns"}
    print(f"\nrows={n:,}  updates={n_upd:,}  master={args.master}  buckets/partition={args.buckets}  "
          f"file groups={groups}  log files={logs}")
    print(f"{'step':<28}{'seconds':>9}{'rows/s':>13}{'vs parquet':>12}{'vs floor':>10}")
    for name, secs in results.items():
        rows = rows_of.get(name, n)
        ratio = f"{results[baseline[name]] / secs:.2f}x" if name in baseline else ""
        to_floor = f"{results[floor[name]] / secs:.2f}x" if name in floor else ""
        print(f"{name:<28}{secs:>9.2f}{rows / secs:>13,.0f}{ratio:>12}{to_floor:>10}")
    print("floor: the Python Data Source API alone (benchmarks/api_floor.py): a sink that discards its input, a "
          "source that hands Spark the Arrow batches of the table's base files; 'schema'/'data columns': the six "
          "data columns only (hudi-py: named with .schema(...)); 'as is': bulk_insert without cluster_by_bucket")
    print(f"medians of {args.write_rounds} rounds: parquet write, hudi bulk_insert (clustered and as is), floor sink "
          f"(as is and clustered); of {args.read_rounds}: the full-table reads; the other steps run once")
    clustered_ratio = results["floor sink, clustered"] / results["hudi bulk_insert"]
    as_is_ratio = results["parquet write"] / results["hudi bulk_insert, as is"]
    print(f"goal: bulk_insert clustered by bucket >= {BULK_INSERT_GOAL}x the no-op sink fed the same clustered input: "
          f"{clustered_ratio:.2f}x, {'met' if clustered_ratio >= BULK_INSERT_GOAL else 'MISSED'}; as is >= "
          f"{BULK_INSERT_GOAL}x the built-in parquet write: {as_is_ratio:.2f}x, "
          f"{'met' if as_is_ratio >= BULK_INSERT_GOAL else 'MISSED'}")
    read_table_ratio = results["parquet read+sum"] / results["hudi read_table+sum"]
    print(f"goal: read_table of a table without log files >= {READ_TABLE_GOAL}x the built-in parquet read: "
          f"{read_table_ratio:.2f}x, {'met' if read_table_ratio >= READ_TABLE_GOAL else 'MISSED'}")
    simple_ratio = results["parquet write 10%"] / results["hudi upsert 10%, simple"]
    print(f"goal: upsert into a SIMPLE-index table >= {UPSERT_SIMPLE_GOAL}x the built-in parquet write of the same "
          f"rows: {simple_ratio:.2f}x, {'met' if simple_ratio >= UPSERT_SIMPLE_GOAL else 'MISSED'}")
    print(f"change data written at commit time (hoodie.table.cdc.enabled): the cdc read of the upsert "
          f"{results['hudi incremental 10%, cdc table'] / results['hudi cdc 10%, change data']:.2f}x the incremental "
          f"read of the same commit (goal >= 0.8; inferred at read time: "
          f"{results['hudi incremental 10%'] / results['hudi cdc 10%']:.2f}x); the upsert "
          f"{results['hudi upsert 10%, change data'] / results['hudi upsert 10%']:.2f}x the time without")
    print("checks: row counts and checksums over every column match the source data (cdc: pre- and post-images)")
    print(f"peak RSS: pyspark Python workers together {figures['bulk_insert_workers_rss_mib']:,.0f} MiB during "
          f"bulk_insert, {figures['read_workers_rss_mib']:,.0f} MiB during the snapshot read, "
          f"{figures['workers_peak_rss_mib']:,.0f} MiB over the run (largest single worker "
          f"{figures['worker_max_rss_mib']:,.0f} MiB); driver {figures['peak_rss_mib']:,.0f} MiB, "
          f"JVM {figures['jvm_peak_rss_mib']:,.0f} MiB")
    figures.update({
        **{f"{key}_ratio": results[baseline[name]] / results[name] for name, key in RATIO_KEYS.items()},
        **{f"{key}_floor_ratio": results[floor[name]] / results[name] for name, key in RATIO_KEYS.items()
           if name in floor},
        "incremental_rows_s": n_upd / results["hudi incremental 10%"],
        "cdc_vs_incremental": results["hudi incremental 10%, cdc table"] / results["hudi cdc 10%, change data"],
        "inferred_cdc_vs_incremental": results["hudi incremental 10%"] / results["hudi cdc 10%"],
        "cdc_upsert_cost": results["hudi upsert 10%, change data"] / results["hudi upsert 10%"],
        "cdc_rows_s": 2 * n_upd / results["hudi cdc 10%"],
        **{k.replace(" ", "_").replace("%", "pct").replace("+", "_") + "_s": v for k, v in results.items()},
    })
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main(sys.argv[1:])
