"""Snapshot planning on an object store: the file listing from the metadata table against listing the table.

    ./run py benchmarks/bench_metadata_listing.py [--partitions 200] [--buckets 4] [--commits 8]

A version 9 merge-on-read table with the metadata table (`files` partition), `partitions` partitions x
`buckets` buckets, a load and `commits` upserts touching every partition (a base file, then a log file per
commit in each file group), written on local disk and copied into S3 (moto's server behind a counting proxy that adds 20 ms to
every request). Planning a snapshot read (timeline, file listing, file slices: `query.plan_snapshot`) is timed
with the default read options (the metadata table's listing) and with `hoodie.metadata.enable=false` (a LIST
of the table), and both plans must name the same files. Prints the times, the requests of each and the ratio.
Goal (issue 27): planning with the metadata table at least 5x faster than listing.
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import best_of, memory_figures  # noqa: E402
from s3_proxy import S3Proxy  # noqa: E402
from s3_server import start as start_s3  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.read import query  # noqa: E402

LATENCY_S = 0.020
ROWS_PER_PARTITION = 20


def _rows(partitions: int, ts: int) -> pa.Table:
    ids = np.arange(partitions * ROWS_PER_PARTITION, dtype=np.int64)
    return pa.table({"id": ids, "ts": np.full(len(ids), ts, dtype=np.int64),
                     "amount": np.random.default_rng(ts).random(len(ids)),
                     "dt": pa.array([f"p{i:04d}" for i in ids % partitions])})


def _write_local(path: Path, partitions: int, buckets: int, commits: int) -> None:
    t = HudiTable.create(str(path), table_name="bench", record_key="id", ordering_field="ts", partition_by="dt",
                         buckets=buckets, options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
                                             "compaction.schedule.enabled": "false"})
    for ts in range(1, commits + 2):
        t.write(_rows(partitions, ts), operation="bulk_insert" if ts == 1 else "upsert")


def _upload(local: Path, s3, bucket: str, prefix: str) -> int:  # noqa: ANN001 - the test server's handle
    client = s3.client()
    files = [p for p in local.rglob("*") if p.is_file()]
    with ThreadPoolExecutor(16) as pool:
        list(pool.map(lambda p: client.put_object(Bucket=bucket, Key=f"{prefix}/{p.relative_to(local)}",
                                                  Body=p.read_bytes()), files))
    return len(files)


def _plan_files(plan: query.ReadPlan) -> list[str]:
    return sorted(f for sl in plan.slices for f in sl.files)


def run(partitions: int, buckets: int, commits: int, repeat: int, work: Path) -> dict[str, float]:
    server, s3 = start_s3()
    proxy = S3Proxy(s3.endpoint).start()
    try:
        _write_local(work / "t", partitions, buckets, commits)
        bucket = s3.new_bucket()
        f: dict[str, float] = {"partitions": partitions, "objects": _upload(work / "t", s3, bucket, "t")}
        uri, opts = f"s3://{bucket}/t", {**s3.options(), "AWS_ENDPOINT_URL": proxy.endpoint}
        proxy.latency_s = LATENCY_S
        plans = {}
        for name, options in (("metadata", {}), ("listing", {"hoodie.metadata.enable": "false"})):
            def plan(options: dict[str, str] = options) -> query.ReadPlan:
                return query.plan_snapshot(HudiTable(uri, options, storage_options=opts).snapshot())

            proxy.counts.clear()
            plans[name] = plan()
            f[f"{name}_list_requests"] = proxy.counts.get("LIST", 0)
            f[f"{name}_get_requests"] = proxy.counts.get("GET", 0)
            f[f"{name}_plan_20ms_s"], plans[name] = best_of(repeat, plan)
        proxy.latency_s = 0.0
        assert _plan_files(plans["metadata"]) == _plan_files(plans["listing"]), "the two listings differ"
        f["planned_files"] = len(_plan_files(plans["metadata"]))
        f["listing_over_metadata"] = f["listing_plan_20ms_s"] / f["metadata_plan_20ms_s"]
        f.update(memory_figures())
        return f
    finally:
        proxy.stop()
        server.stop()


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--partitions", type=int, default=200)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--commits", type=int, default=8)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        f = run(args.partitions, args.buckets, args.commits, args.repeat, Path(tmp))
    for key, value in f.items():
        print(f"{key:28s} {value:12.3f}" if isinstance(value, float) else f"{key:28s} {value:12d}")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))


if __name__ == "__main__":
    main()
