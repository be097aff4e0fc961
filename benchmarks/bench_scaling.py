"""Upsert cost against table size: the bucket index makes an upsert O(batch), not O(table).

    ./run py benchmarks/bench_scaling.py [--sizes 1000000,4000000,16000000] [--batch 200000]

For each size: bulk-load the table (in chunks, bounded memory: its peak RSS is reported), then time the same
200k-row upsert (half updates, half new keys) and check its effect. Goal (issue 7): cost at 16M <= 1.3x the
cost at 1M.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import make_rows, memory_figures, step_memory  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402

CHUNK = 2_000_000


def upsert_cost(size: int, batch: int, work: Path, buckets: int, mem: dict[str, float]) -> float:
    t = HudiTable.create(str(work / f"t{size}"), table_name="scale", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=buckets)
    chunks = (make_rows(np.arange(s, min(s + CHUNK, size), dtype=np.int64), ts=1, seed=s).to_batches()[0]
              for s in range(0, size, CHUNK))
    with step_memory(mem, f"load_{size}"):
        t.write(chunks, operation="bulk_insert")
    rng = np.random.default_rng(size)
    ids = np.concatenate([rng.choice(size, batch // 2, replace=False), np.arange(size, size + batch - batch // 2)])
    rows = make_rows(ids.astype(np.int64), ts=2, seed=1)
    start = time.perf_counter()
    t.write(rows)
    cost = time.perf_counter() - start
    got = t.to_arrow(columns=["id"], filters=[("ts", "=", 2)]).num_rows
    assert got == batch, f"upsert applied to {got} rows, expected {batch}"
    shutil.rmtree(work / f"t{size}", ignore_errors=True)
    return cost


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--sizes", default="1000000,4000000,16000000")
    ap.add_argument("--batch", type=int, default=200_000)
    ap.add_argument("--buckets", type=int, default=16)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    sizes = [int(s) for s in args.sizes.split(",")]
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_scale_"))
    figures: dict[str, float] = {}
    try:
        for size in sizes:
            figures[f"upsert_s_{size}"] = upsert_cost(size, args.batch, work, args.buckets, figures)
            print(f"  table {size:>12,} rows: upsert of {args.batch:,} rows in {figures[f'upsert_s_{size}']:.2f} s"
                  f"   (bulk load peak RSS {figures[f'load_{size}_rss_mib']:,.0f} MiB)", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    figures["ratio_largest_to_smallest"] = figures[f"upsert_s_{sizes[-1]}"] / figures[f"upsert_s_{sizes[0]}"]
    figures.update(memory_figures())
    print(f"upsert cost at {sizes[-1]:,} rows = {figures['ratio_largest_to_smallest']:.2f}x the cost at {sizes[0]:,} "
          "(goal <= 1.3x)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
