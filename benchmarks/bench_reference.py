"""Reading the reference tables written by Apache Hudi: hudi-py against hudi-rs on the same files.

    ./run py benchmarks/bench_reference.py [--repeat 20]

Reads the largest reference tables (by files) `--repeat` times with each reader in turn and prints the time
per snapshot read and the ratio; both readers must return the same number of rows. Goal (issue 3): hudi-py
not slower than hudi-rs.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from common import memory_figures  # noqa: E402

REFERENCE = Path(__file__).resolve().parents[2] / "shared" / "reference-tables"


def _largest(n: int) -> list[Path]:
    tables = [p for p in REFERENCE.iterdir() if (p / ".hoodie").is_dir()]
    return sorted(tables, key=lambda p: -sum(1 for f in p.rglob("*") if ".hoodie" not in f.parts))[:n]


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--repeat", type=int, default=20)
    ap.add_argument("--tables", type=int, default=5)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    from hudi import HudiTableBuilder

    from hudi_ds import HudiTable

    if not REFERENCE.is_dir():
        print(f"{REFERENCE} is absent", file=sys.stderr)
        return {}
    figures: dict[str, float] = {}
    ours_total = theirs_total = 0.0
    for path in _largest(args.tables):
        t0 = time.perf_counter()
        for _ in range(args.repeat):
            ours = HudiTable(str(path)).to_arrow()
        t1 = time.perf_counter()
        for _ in range(args.repeat):
            theirs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(path)).build().read())
        t2 = time.perf_counter()
        assert ours.num_rows == theirs.num_rows, (path.name, ours.num_rows, theirs.num_rows)
        ours_s, theirs_s = (t1 - t0) / args.repeat, (t2 - t1) / args.repeat
        ours_total += ours_s
        theirs_total += theirs_s
        figures[f"{path.name}_ours_ms"] = ours_s * 1000
        figures[f"{path.name}_hudi_rs_ms"] = theirs_s * 1000
        print(f"  {path.name:55s} hudi-py {ours_s * 1000:7.1f} ms   hudi-rs {theirs_s * 1000:7.1f} ms   "
              f"ratio {theirs_s / ours_s:4.2f}x")
    figures["speed_vs_hudi_rs"] = theirs_total / ours_total
    figures.update(memory_figures())
    print(f"hudi-py reads the reference tables {figures['speed_vs_hudi_rs']:.2f}x as fast as hudi-rs (goal >= 1)")
    if args.json:
        Path(args.json).write_text(json.dumps(figures, indent=1))
    return figures


if __name__ == "__main__":
    main()
