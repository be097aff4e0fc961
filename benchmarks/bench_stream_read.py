"""Streaming-read benchmark: commit-to-row latency of spark.readStream.format("hudi-py"), and its throughput
against the batch snapshot read of the same rows.

    ./run py benchmarks/bench_stream_read.py [--commits 60] [--interval 0.5] [--rows 2000000]

Latency: after a warm-up commit, a writer process commits small upserts every `interval` seconds and records the wall-clock time at
which each commit completed; a streaming query (latest-state mode, 1 s processing-time trigger, local[2])
records when each commit's rows reach its output (foreachBatch). Latency = arrival - commit completion, over
every commit; median and p95. Throughput: a `rows`-row table read once by spark.read (sum over every column)
and once by a stream from `earliest` with Trigger.AvailableNow (the same sums per micro-batch, added up); the
checksums must match. Both sessions are one local[2] SparkSession.
"""

from __future__ import annotations

import argparse
import json
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).parent))
from bench_spark import CHECKSUM, checksum, hudi_options, same, source, start_session  # noqa: E402

WRITER = r"""
import json, sys, time
import pyarrow as pa
from hudi_ds import HudiTable
path, commits, interval, log = sys.argv[1], int(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
# no table services after these writes (the figures predate them): the latency measured is the commit's alone
t = HudiTable(path, options={"compaction.schedule.enabled": "false", "hoodie.clean.automatic": "false",
                             "hoodie.archive.automatic": "false"})
with open(log, "a") as out:
    for n in range(commits):
        keys = [(n * 7 + i) % 500 for i in range(20)]
        instant = t.write(pa.table({"id": keys, "name": [f"n{k}" for k in keys], "amount": [float(n)] * 20,
                                    "ts": [n + 2] * 20, "dt": ["2024-01-01"] * 20, "flag": [n % 3] * 20}))
        out.write(json.dumps({"instant": instant, "done": time.time(), "rows": 20}) + "\n")
        out.flush()
        time.sleep(interval)
"""


def latency(spark: Any, work: Path, commits: int, interval: float) -> dict[str, float]:
    """Per-commit latency from the writer's commit completion to the rows' arrival in a stream's output."""
    import pyarrow as pa

    from hudi_ds import HudiTable

    path = str(work / "latency")
    table = HudiTable.create(path, table_name="lat", record_key="id", ordering_field="ts", partition_by="dt",
                             buckets=2)
    table.write(pa.table({"id": list(range(500)), "name": ["x"] * 500, "amount": [0.0] * 500, "ts": [1] * 500,
                          "dt": ["2024-01-01"] * 500, "flag": [0] * 500}))
    arrivals: dict[str, float] = {}
    rows_seen: dict[str, int] = {}
    lock = threading.Lock()

    def record(df: Any, batch_id: int) -> None:
        commit_times = [r[0] for r in df.select("_hoodie_commit_time").collect()]
        now = time.time()
        with lock:
            for c in commit_times:
                arrivals.setdefault(c, now)
                rows_seen[c] = rows_seen.get(c, 0) + 1

    query = (spark.readStream.format("hudi-py").option("read.start-commit", "latest").load(path)
             .writeStream.foreachBatch(record).option("checkpointLocation", str(work / "lat_ck"))
             .trigger(processingTime="1 second").start())
    warmup = work / "warmup.jsonl"  # one commit through the running query first: Python workers are up
    subprocess.run([sys.executable, "-c", WRITER, path, "1", "0", str(warmup)], check=True)
    _wait_for(arrivals, lock, [json.loads(line)["instant"] for line in warmup.read_text().splitlines()])
    with lock:
        arrivals.clear()
        rows_seen.clear()
    log = work / "commits.jsonl"
    subprocess.run([sys.executable, "-c", WRITER, path, str(commits), str(interval), str(log)], check=True)
    written = [json.loads(line) for line in log.read_text().splitlines()]
    _wait_for(arrivals, lock, [w["instant"] for w in written])
    query.stop()
    missing = [w["instant"] for w in written if w["instant"] not in arrivals]
    if missing:
        raise SystemExit(f"commits never reached the stream: {missing[:5]}")
    # latest-state rows: every key a commit wrote, unless a later commit in the same micro-batch rewrote it
    if sum(rows_seen.values()) > sum(w["rows"] for w in written):
        raise SystemExit("the stream emitted more rows than were written")
    lat = sorted(arrivals[w["instant"]] - w["done"] for w in written)
    p95 = lat[min(len(lat) - 1, round(0.95 * (len(lat) - 1)))]
    return {"latency_commits": len(lat), "latency_median_s": statistics.median(lat), "latency_p95_s": p95,
            "latency_max_s": lat[-1]}


def _wait_for(arrivals: dict[str, float], lock: threading.Lock, instants: list[str], timeout_s: float = 120) -> None:
    deadline = time.time() + timeout_s
    while time.time() < deadline:
        with lock:
            if all(i in arrivals for i in instants):
                return
        time.sleep(0.1)


def throughput(spark: Any, work: Path, rows: int) -> dict[str, float]:
    """Batch snapshot read vs a stream from `earliest` over the same table, checksums compared."""
    from hudi_ds.spark import cluster_by_bucket

    path = str(work / "throughput")
    opts = hudi_options(4)
    cluster_by_bucket(source(spark, rows), opts).write.format("hudi-py").options(**opts) \
        .option("hoodie.datasource.write.operation", "bulk_insert").mode("overwrite").save(path)

    start = time.perf_counter()
    batch = checksum(spark.read.format("hudi-py").load(path))
    batch_s = time.perf_counter() - start

    parts: list[tuple] = []

    def add(df: Any, batch_id: int) -> None:
        parts.append(tuple(df.selectExpr(*CHECKSUM).first()))

    start = time.perf_counter()
    query = (spark.readStream.format("hudi-py").load(path).writeStream.foreachBatch(add)
             .option("checkpointLocation", str(work / "tp_ck")).trigger(availableNow=True).start())
    query.awaitTermination()
    stream_s = time.perf_counter() - start
    streamed = tuple(sum(p[i] or 0 for p in parts) for i in range(len(CHECKSUM)))
    if batch[0] != rows or not same(batch, streamed):
        raise SystemExit(f"checksums differ: batch {batch}, stream {streamed}")
    return {"rows": rows, "batch_read_s": batch_s, "stream_read_s": stream_s,
            "stream_read_ratio": batch_s / stream_s}


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser()
    ap.add_argument("--commits", type=int, default=60)
    ap.add_argument("--interval", type=float, default=0.5)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    spark = start_session("local[2]")
    with tempfile.TemporaryDirectory() as tmp:
        figures = latency(spark, Path(tmp), args.commits, args.interval)
        print(f"commit -> row latency over {figures['latency_commits']:.0f} commits (1 s trigger): "
              f"median {figures['latency_median_s']:.2f} s (goal <= 2), p95 {figures['latency_p95_s']:.2f} s "
              f"(goal <= 4), max {figures['latency_max_s']:.2f} s")
        figures |= throughput(spark, Path(tmp), args.rows)
        print(f"read of {args.rows:,} rows: batch {figures['batch_read_s']:.2f} s, stream (availableNow) "
              f"{figures['stream_read_s']:.2f} s = {figures['stream_read_ratio']:.2f}x batch (goal >= 0.7); "
              "checksums match")
    spark.stop()
    if args.json:
        Path(args.json).write_text(json.dumps(figures))
    return figures


if __name__ == "__main__":
    main()
