"""Spark job time against cores: the same hudi-py job on a local[1] and a local[2] session.

    ./run py benchmarks/bench_spark_cores.py [--rows 2000000] [--masters local[1],local[2]]

Each master runs in its own process (a process holds one SparkContext): a warm-up, then a hudi-py bulk_insert
of --rows rows, an upsert of 10% of the keys and a snapshot read + sum over every column, each checked against
the source (row count and checksum). Prints seconds per step and the local[1] / local[2] ratio per step: 2.0
would be a perfect use of the second core. Also the peak RSS of each run's pyspark Python workers.
"""

from __future__ import annotations

import argparse
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

sys.path.insert(0, str(Path(__file__).parent))
from bench_spark import (  # noqa: E402
    checksum,
    hudi_options,
    hudi_read,
    hudi_write,
    same,
    source,
    start_session,
    updates_of,
    warm_up,
)
from common import SparkMemory, memory_figures, timed  # noqa: E402

STEPS = ("bulk_insert", "upsert", "read")


def job(master: str, n: int, buckets: int) -> dict[str, float]:
    """One master's run, in this process: seconds per step and memory."""
    spark = start_session(master)
    work = Path(tempfile.mkdtemp(prefix="hudi_py_cores_"))
    opts = hudi_options(buckets)
    parts = 2 * spark.sparkContext.defaultParallelism
    try:
        with SparkMemory() as mem:
            warm_up(spark, work, opts, parts, n)
            base = source(spark, n)
            updates = updates_of(base)
            expected = checksum(base.filter("id % 10 <> 0").unionByName(updates))
            f: dict[str, float] = {}
            f["bulk_insert_s"], _ = timed(lambda: hudi_write(base, work / "t", "bulk_insert", opts, parts))
            f["upsert_s"], _ = timed(lambda: hudi_write(updates, work / "t", "upsert", opts, parts))
            f["read_s"], got = timed(lambda: checksum(hudi_read(spark, work / "t")))
            assert same(got, expected), (master, got, expected)
        return {**f, **memory_figures(mem)}
    finally:
        spark.stop()
        shutil.rmtree(work, ignore_errors=True)


def key(master: str) -> str:
    """local[2] -> local2: a figure-name prefix."""
    return "".join(c for c in master if c.isalnum())


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--masters", default="local[1],local[2]", help="two masters, the smaller first")
    ap.add_argument("--job", metavar="MASTER", help=argparse.SUPPRESS)  # internal: run one master's job here
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    if args.job:
        Path(args.json).write_text(json.dumps(job(args.job, args.rows, args.buckets)))
        return {}

    masters = args.masters.split(",")
    figures: dict[str, float] = {}
    with tempfile.TemporaryDirectory() as tmp:
        for master in masters:
            out = Path(tmp) / f"{key(master)}.json"
            cmd = [sys.executable, __file__, "--job", master, "--rows", str(args.rows), "--buckets",
                   str(args.buckets), "--json", str(out)]
            proc = subprocess.run(cmd, capture_output=True, text=True)
            if proc.returncode != 0:
                raise SystemExit(f"{master} run failed:\n{proc.stderr[-3000:]}")
            figures.update({f"{key(master)}_{k}": v for k, v in json.loads(out.read_text()).items()})
    small, big = key(masters[0]), key(masters[-1])
    print(f"hudi-py Spark job, {args.rows:,} rows, {args.buckets} buckets x 8 partitions; checksums match")
    print(f"{'step':<14}{masters[0]:>12}{masters[-1]:>12}{'ratio':>9}")
    for step in STEPS:
        ratio = figures[f"{small}_{step}_s"] / figures[f"{big}_{step}_s"]
        figures[f"{step}_{small}_over_{big}"] = ratio
        print(f"{step:<14}{figures[f'{small}_{step}_s']:>11.2f}s{figures[f'{big}_{step}_s']:>11.2f}s{ratio:>8.2f}x")
    for master in masters:
        print(f"peak RSS at {master}: pyspark Python workers together {figures[f'{key(master)}_workers_peak_rss_mib']:,.0f}"
              f" MiB (largest single worker {figures[f'{key(master)}_worker_max_rss_mib']:,.0f} MiB), JVM "
              f"{figures[f'{key(master)}_jvm_peak_rss_mib']:,.0f} MiB")
    figures.update(memory_figures())
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
