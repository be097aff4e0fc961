"""Streaming benchmark: sustained ingest through the hudi-py sink, commit overhead of small micro-batches,
and snapshot read time as delta commits accumulate, with and without compaction.

    ./run py benchmarks/bench_streaming.py [--seconds 120] [--batch-rows 200000]

Goals (issue 5): sustained >= 300,000 rows/s at local[2]; <= 0.3 s commit overhead per small batch; after 50
batches with compaction, snapshot read time <= 1.2x the time just after a compaction.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import numpy as np
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from common import make_rows  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402


def _files(folder: Path, n_files: int, rows: int, keyspace: int) -> None:
    """Batches of `rows`: 90% new keys, 10% updates of earlier keys; increasing modification times."""
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


def _stream(spark, src: Path, table: Path, ck: Path, seconds: float, max_files: int) -> list[dict]:
    from pyspark.sql.types import StructType

    schema = StructType.fromJson(json.loads(spark.read.parquet(str(src)).schema.json()))
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", max_files).parquet(str(src))
    q = (df.writeStream.format("hudi-py").option("hoodie.table.name", "stream")
         .option("hoodie.datasource.write.recordkey.field", "id")
         .option("hoodie.datasource.write.precombine.field", "ts")
         .option("hoodie.datasource.write.partitionpath.field", "dt")
         .option("hoodie.bucket.index.num.buckets", "2")
         .option("compaction.delta_commits", "10").option("compaction.async.enabled", "true")
         .option("checkpointLocation", str(ck)).start(str(table)))
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline and q.isActive:
        time.sleep(0.5)
    progress = [p for p in q.recentProgress if p.get("numInputRows", 0) > 0]
    q.stop()
    return progress


def read_time_with_accumulating_logs(work: Path, rows: int, batches: int, batch_rows: int) -> dict[str, float]:
    out: dict[str, float] = {}
    for compact in (False, True):
        t = HudiTable.create(str(work / f"acc{compact}"), table_name="acc", record_key="id", ordering_field="ts",
                             partition_by="dt", buckets=4)
        t.write(make_rows(np.arange(rows, dtype=np.int64), ts=1), operation="bulk_insert")
        rng = np.random.default_rng(2)
        times = []
        after_compaction = None
        for b in range(batches):
            t.write(make_rows(rng.choice(rows, batch_rows, replace=False).astype(np.int64), ts=b + 2, seed=b))
            if compact and (b + 1) % 5 == 0:
                t.compact()
                start = time.perf_counter()
                t.to_arrow()
                after_compaction = time.perf_counter() - start
            if b == batches - 1 or b % 10 == 9:
                start = time.perf_counter()
                assert t.to_arrow().num_rows == rows
                times.append(time.perf_counter() - start)
        key = "with" if compact else "without"
        out[f"read_s_after_{batches}_{key}_compaction"] = times[-1]
        out[f"read_s_after_10_{key}_compaction"] = times[0]
        if after_compaction is not None:
            out["read_s_just_after_compaction"] = after_compaction
    out["read_ratio_vs_just_compacted"] = (out[f"read_s_after_{batches}_with_compaction"]
                                           / out["read_s_just_after_compaction"])
    return out


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--seconds", type=float, default=120.0)
    ap.add_argument("--batch-rows", type=int, default=200_000)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_stream_bench_"))
    figures: dict[str, float] = {}
    try:
        from hudi_ds.spark import session

        spark = session(**{"spark.sql.shuffle.partitions": "2"})
        n_files = max(4, int(args.seconds * 3))
        _files(work / "big", n_files, args.batch_rows, keyspace=50_000_000)
        progress = _stream(spark, work / "big", work / "t1", work / "ck1", args.seconds, max_files=1)
        rows = sum(p["numInputRows"] for p in progress[1:])
        busy = sum(p["durationMs"]["triggerExecution"] for p in progress[1:]) / 1000
        figures["sustained_rows_s"] = rows / busy if busy else 0.0
        figures["sustained_batches"] = len(progress)
        _files(work / "small", 40, 100, keyspace=1_000)
        small = _stream(spark, work / "small", work / "t2", work / "ck2", 40, max_files=1)
        overheads = [p["durationMs"]["triggerExecution"] / 1000 for p in small[5:]]
        figures["commit_overhead_s"] = statistics.median(overheads) if overheads else float("nan")
        spark.stop()
        figures.update(read_time_with_accumulating_logs(work, 1_000_000, 50, 20_000))
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"sustained ingest: {figures['sustained_rows_s']:,.0f} rows/s over {figures['sustained_batches']:.0f} "
          f"micro-batches of {args.batch_rows:,} rows (goal >= 300,000)")
    print(f"small micro-batch (100 rows), median time: {figures['commit_overhead_s']:.2f} s (goal <= 0.3 s)")
    print(f"snapshot read after 50 upserts: {figures['read_s_after_50_without_compaction']:.2f} s without compaction, "
          f"{figures['read_s_after_50_with_compaction']:.2f} s with; just after a compaction "
          f"{figures['read_s_just_after_compaction']:.2f} s -> ratio {figures['read_ratio_vs_just_compacted']:.2f}x "
          "(goal <= 1.2x)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
