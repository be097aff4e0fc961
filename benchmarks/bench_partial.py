"""Partial updates against full-row updates of the same keys (issue 29), one process, interleaved.

    ./run py benchmarks/bench_partial.py [--rows 2000000] [--rounds 5]

bench_lakes' rows loaded into a version 9 merge-on-read table with `hoodie.table.partial.update.mode=KEEP_VALUES`,
4 buckets. Each round builds two such tables and upserts the same 10% of existing keys into each: one write of
whole rows (six columns), one carrying only the key, the partition, the ordering field and the amount (four of
six: merge-on-read writes them as partial log blocks, the IS_PARTIAL header and the partial schema). Then the
snapshot read of each (all data columns, the logs merged). The order of the two alternates per round; figures
are medians. Checks that the partial table reads the full table's rows with the old names and flags kept.
Goals: the partial upsert costs <= 1x the full-row upsert; the snapshot with partial logs <= 1.3x the one with
full-row logs.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).parent))
from common import checksum, lakes_data, make_rows, timed  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402

DATA_COLUMNS = ["id", "name", "amount", "ts", "dt", "flag"]
PARTIAL_COLUMNS = ["id", "dt", "ts", "amount"]
KINDS = ("full", "partial")


def one_table(kind: str, work: Path, base, update) -> tuple[float, float, object]:
    """Seconds of the upsert and of the snapshot read, and the snapshot."""
    t = HudiTable.create(str(work / kind), table_name="bench", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="MERGE_ON_READ", buckets=4,
                         options={"hoodie.write.table.version": "9", "hoodie.table.partial.update.mode": "KEEP_VALUES"})
    t.write(base, operation="bulk_insert")
    data = update if kind == "full" else update.select(PARTIAL_COLUMNS)
    upsert_s, _ = timed(lambda: t.write(data))
    read_s, snapshot = timed(lambda: t.to_arrow(columns=DATA_COLUMNS))
    return upsert_s, read_s, snapshot


def run(rows: int, rounds: int) -> dict[str, float]:
    base, _, _ = lakes_data(rows)
    ids = np.random.default_rng(7).choice(rows, size=rows // 10, replace=False).astype(np.int64)
    update = make_rows(ids, ts=2, seed=5)
    times: dict[str, dict[str, list[float]]] = {k: {"upsert": [], "read": []} for k in KINDS}
    for n in range(rounds):
        reads = {}
        for kind in (KINDS if n % 2 == 0 else KINDS[::-1]):
            work = Path(tempfile.mkdtemp(prefix="hudi_ds_partial_"))
            try:
                upsert_s, read_s, reads[kind] = one_table(kind, work, base, update)
            finally:
                shutil.rmtree(work, ignore_errors=True)
            times[kind]["upsert"].append(upsert_s)
            times[kind]["read"].append(read_s)
        full, partial = (reads[k].sort_by("id") for k in KINDS)  # type: ignore[attr-defined]
        assert checksum(full) == checksum(partial), "the partial update read other amounts than the full one"
        assert full["amount"].equals(partial["amount"]) and partial["name"].equals(base.sort_by("id")["name"]), \
            "the partial update lost a column it did not carry"
    f: dict[str, float] = {"rows": rows, "updated_rows": len(ids), "rounds": rounds}
    for kind in KINDS:
        for step in ("upsert", "read"):
            f[f"{kind}_{step}_s"] = statistics.median(times[kind][step])
    f["partial_upsert_cost"] = f["partial_upsert_s"] / f["full_upsert_s"]
    f["partial_read_cost"] = f["partial_read_s"] / f["full_read_s"]
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    f = run(args.rows, args.rounds)
    print(f"partial vs full-row upsert of {f['updated_rows']:,.0f} of {args.rows:,} rows (version 9 merge-on-read, "
          f"KEEP_VALUES), medians of {args.rounds} interleaved rounds")
    print(f"  upsert: full rows {f['full_upsert_s']:.3f} s, {len(PARTIAL_COLUMNS)} of {len(DATA_COLUMNS)} columns "
          f"{f['partial_upsert_s']:.3f} s = {f['partial_upsert_cost']:.2f}x (goal <= 1x)")
    print(f"  snapshot with the logs: full-row logs {f['full_read_s']:.3f} s, partial logs {f['partial_read_s']:.3f} s"
          f" = {f['partial_read_cost']:.2f}x (goal <= 1.3x)")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=2))
    return f


if __name__ == "__main__":
    main()
