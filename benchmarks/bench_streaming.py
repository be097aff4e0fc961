"""Streaming benchmark: sustained ingest through the hudi-py sink, commit overhead of small micro-batches,
and snapshot read time as delta commits accumulate, with and without compaction.

    ./run py benchmarks/bench_streaming.py [--seconds 60] [--batch-rows 200000]

Goals: sustained ingest >= 0.7x a no-op Python sink fed by the same source in the same session
(benchmarks/api_floor.py; issue 32, where issue 5 had 300,000 rows/s at local[2]: the rows/s stay in the report);
<= 0.3 s commit overhead per small batch (issue 5); after 50
delta commits with a compaction every 5, snapshot read time just after a compaction <= 1.2x the time just after
the first ones (no drift; medians of the last and first third of the cycles, as one read is noisy). Also measured: how much the read grows between compactions, and without compaction.
Checks: each streamed table holds exactly the keys of the files its micro-batches committed, each at its latest
version; every snapshot read has every row, and both accumulating tables end equal to the expected state.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
import api_floor  # noqa: E402
from common import SparkMemory, make_rows, memory_figures, step_memory, timed  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402

COMPACT_EVERY = 5  # delta commits between compactions in the accumulating-logs run
NO_AUTOMATIC_SERVICES = {"compaction.schedule.enabled": "false", "hoodie.clean.automatic": "false",
                         "hoodie.archive.automatic": "false"}


def _files(folder: Path, n_files: int, rows: int, keyspace: int) -> None:
    """Batches of `rows`: 90% new keys, 10% updates of earlier keys; file i has ts i + 1 and increasing
    modification times (the stream reads them in that order)."""
    folder.mkdir(parents=True)
    rng = np.random.default_rng(1)
    next_id = 0
    for i in range(n_files):
        new = np.arange(next_id, next_id + rows - rows // 10)
        next_id += len(new)
        upd = rng.integers(0, max(next_id, 1), rows // 10)
        ids = np.concatenate([new, upd]) % keyspace
        ids = np.unique(ids)
        path = folder / f"b{i:05d}.parquet"
        pq.write_table(make_rows(ids.astype(np.int64), ts=i + 1, seed=i), path)
        os.utime(path, (1_700_000_000 + i, 1_700_000_000 + i))


def _stream(spark, src: Path, table: Path, ck: Path, seconds: float, n_files: int) -> list[dict]:
    """One file per micro-batch into the hudi-py sink, until `seconds` pass or the last file is committed."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(spark.read.parquet(str(src)).schema.json()))
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(src))
    q = (df.writeStream.format("hudi-py").option("hoodie.table.name", "stream")
         .option("hoodie.datasource.write.recordkey.field", "id")
         .option("hoodie.datasource.write.precombine.field", "ts")
         .option("hoodie.datasource.write.partitionpath.field", "dt")
         .option("hoodie.bucket.index.num.buckets", "2")
         .option("compaction.delta_commits", "10").option("compaction.async.enabled", "true")
         .option("checkpointLocation", str(ck)).start(str(table)))
    return _run(q, seconds, n_files)


def _run(q, seconds: float, n_files: int) -> list[dict]:
    """Let the query run until `seconds` pass or its last file is committed; its progress of micro-batches with
    rows."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and q.isActive and (q.lastProgress or {}).get("batchId", -1) < n_files - 1:
        time.sleep(0.2)
    progress = [p for p in q.recentProgress if p.get("numInputRows", 0) > 0]
    q.stop()
    return progress


def _floor_stream(spark, src: Path, work: Path, seconds: float, n_files: int) -> list[dict]:
    """The same source into a Python sink that discards its rows (benchmarks/api_floor.py): what Spark's Python
    Data Source API costs a streaming sink before it does anything."""
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(spark.read.parquet(str(src)).schema.json()))
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(str(src))
    q = (df.writeStream.format("hudi-py-floor-sink").option("path", str(work / "floor_rows"))
         .option("checkpointLocation", str(work / "floor_ck")).start())
    return _run(q, seconds, n_files)


def _rows_per_second(progress: list[dict]) -> float:
    """Rows over the time spent in micro-batches, the first (the warm-up) left out."""
    rows = sum(p["numInputRows"] for p in progress[1:])
    busy = sum(p["durationMs"]["triggerExecution"] for p in progress[1:]) / 1000
    return rows / busy if busy else 0.0


def _check_stream(table: Path, src: Path) -> int:
    """Assert the table holds exactly the keys of the first m files, each with its latest ts, where m is the
    newest ts in the table (file i carries ts i + 1); returns m, the micro-batches committed."""
    got = HudiTable(str(table)).to_arrow(columns=["id", "ts"])
    m = int(pc.max(got["ts"]).as_py())
    files = sorted(src.glob("*.parquet"))[:m]
    want = pa.concat_tables(pq.read_table(f, columns=["id", "ts"]) for f in files) \
        .group_by("id").aggregate([("ts", "max")])
    sums = (got.num_rows, pc.sum(got["id"]).as_py(), pc.sum(got["ts"]).as_py())
    expected = (want.num_rows, pc.sum(want["id"]).as_py(), pc.sum(want["ts_max"]).as_py())
    assert sums == expected, (table.name, sums, expected)
    return m


def read_time_with_accumulating_logs(work: Path, rows: int, commits: int, batch_rows: int) -> dict[str, float]:
    """Snapshot read seconds after n delta commits (upserts of `batch_rows` existing keys into a table of
    `rows` rows), without compaction (read every COMPACT_EVERY commits: the time only grows) and with a
    compaction every COMPACT_EVERY delta commits (read after every commit: it rises and falls back)."""
    out: dict[str, float] = {}
    for compact in (False, True):
        key = "with" if compact else "without"
        # compaction by hand (or not at all): no table service runs by itself after these writes
        t = HudiTable.create(str(work / f"acc_{key}"), table_name="acc", record_key="id", ordering_field="ts",
                             partition_by="dt", buckets=4, options=NO_AUTOMATIC_SERVICES)
        base = make_rows(np.arange(rows, dtype=np.int64), ts=1)
        t.write(base, operation="bulk_insert")
        amount = base["amount"].to_numpy().copy()  # the expected state, kept with numpy
        rng = np.random.default_rng(2)
        for n in range(commits + 1):
            if n:
                batch = make_rows(rng.choice(rows, batch_rows, replace=False).astype(np.int64), ts=n + 1, seed=n)
                t.write(batch)
                amount[batch["id"].to_numpy()] = batch["amount"].to_numpy()
                if compact and n % COMPACT_EVERY == 0:
                    t.compact()
            if compact or n % COMPACT_EVERY == 0:
                out[f"read_s_after_{n}_{key}_compaction"], snap = timed(t.to_arrow)
                assert snap.num_rows == rows, (key, n, snap.num_rows)
        got_ids, got_amount = pc.sum(snap["id"]).as_py(), pc.sum(snap["amount"]).as_py()
        assert got_ids == rows * (rows - 1) // 2 and math.isclose(got_amount, amount.sum(), rel_tol=1e-9), \
            (key, got_ids, got_amount, amount.sum())
    cycles = range(COMPACT_EVERY, commits + 1, COMPACT_EVERY)
    out["read_s_just_after_compaction"] = statistics.median(out[f"read_s_after_{n}_with_compaction"] for n in cycles)
    out["read_s_just_before_compaction"] = statistics.median(
        out[f"read_s_after_{n - 1}_with_compaction"] for n in cycles)
    out["read_ratio_vs_just_compacted"] = out["read_s_just_before_compaction"] / out["read_s_just_after_compaction"]
    just_after = [out[f"read_s_after_{n}_with_compaction"] for n in cycles]
    third = max(1, len(just_after) // 3)
    out["read_drift_with_compaction"] = statistics.median(just_after[-third:]) / statistics.median(just_after[:third])
    out["read_growth_without_compaction"] = (out[f"read_s_after_{commits}_without_compaction"]
                                             / out["read_s_after_0_without_compaction"])
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=60.0, help="length of the sustained-ingest stream")
    ap.add_argument("--batch-rows", type=int, default=200_000)
    ap.add_argument("--log-rows", type=int, default=1_000_000, help="table size of the accumulating-logs run")
    ap.add_argument("--log-commits", type=int, default=50, help="delta commits of the accumulating-logs run")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    assert args.log_commits % COMPACT_EVERY == 0, f"--log-commits must be a multiple of {COMPACT_EVERY}"
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_stream_bench_"))
    figures: dict[str, float] = {}
    try:
        from hudi_ds.spark import session

        spark = session(**{"spark.sql.shuffle.partitions": "2"})
        # 2 files a second of stream: 400,000 rows/s before the stream runs dry (then it idles, unmeasured)
        n_files = max(4, int(args.seconds * 2))
        _files(work / "big", n_files, args.batch_rows, keyspace=50_000_000)
        _files(work / "small", 40, 100, keyspace=1_000)
        with SparkMemory() as mem:
            with step_memory(figures, "stream", mem):
                progress = _stream(spark, work / "big", work / "t1", work / "ck1", args.seconds, n_files)
            small = _stream(spark, work / "small", work / "t2", work / "ck2", 60, 40)
        api_floor.register(spark)
        floor = _floor_stream(spark, work / "big", work, args.seconds, n_files)
        spark.stop()
        figures["sustained_batches"] = _check_stream(work / "t1", work / "big")
        _check_stream(work / "t2", work / "small")
        figures["sustained_rows_s"] = _rows_per_second(progress)
        figures["floor_rows_s"] = _rows_per_second(floor)
        figures["sustained_vs_floor"] = figures["sustained_rows_s"] / figures["floor_rows_s"]
        overheads = [p["durationMs"]["triggerExecution"] / 1000 for p in small[5:]]
        figures["commit_overhead_s"] = statistics.median(overheads) if overheads else float("nan")
        figures.update(read_time_with_accumulating_logs(work, args.log_rows, args.log_commits, 20_000))
        figures.update(memory_figures(mem))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    last = args.log_commits
    print(f"sustained ingest: {figures['sustained_rows_s']:,.0f} rows/s over {figures['sustained_batches']:.0f} "
          f"micro-batches of {args.batch_rows:,} rows; checked: every committed key, latest version")
    print(f"  the same source into a Python sink that discards its rows (the API floor, same session): "
          f"{figures['floor_rows_s']:,.0f} rows/s; hudi-py {figures['sustained_vs_floor']:.2f}x of it (goal >= 0.7x)")
    print(f"small micro-batch (100 rows), median time: {figures['commit_overhead_s']:.2f} s (goal <= 0.3 s)")
    print(f"snapshot read of {args.log_rows:,} rows after n upserts of 20,000 rows (seconds):")
    print("  n                  " + "".join(f"{n:>7}" for n in range(0, last + 1, COMPACT_EVERY)))
    for key in ("without", "with"):
        print(f"  {key + ' compaction':<19}" + "".join(
            f"{figures[f'read_s_after_{n}_{key}_compaction']:>7.2f}" for n in range(0, last + 1, COMPACT_EVERY)))
    print(f"  without compaction the read after {last} upserts takes {figures['read_growth_without_compaction']:.2f}x"
          f" the first; compacting every {COMPACT_EVERY}: after {last} upserts "
          f"{figures['read_drift_with_compaction']:.2f}x the read after the first compactions (goal <= 1.2x); "
          f"{figures['read_s_just_before_compaction']:.2f} s just before a compaction vs "
          f"{figures['read_s_just_after_compaction']:.2f} s just after (medians): "
          f"{figures['read_ratio_vs_just_compacted']:.2f}x")
    print(f"peak RSS: pyspark Python workers together {figures['stream_workers_rss_mib']:,.0f} MiB during the "
          f"sustained stream (largest single worker {figures['worker_max_rss_mib']:,.0f} MiB), JVM "
          f"{figures['jvm_peak_rss_mib']:,.0f} MiB; this process {figures['peak_rss_mib']:,.0f} MiB")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
