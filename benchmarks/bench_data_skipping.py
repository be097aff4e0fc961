"""Data skipping by the metadata table's column_stats: a filter on a non-partition column matching 1% of the rows,
read with the statistics and without them; and the cost column_stats adds to an upsert.

    ./run py benchmarks/bench_data_skipping.py [--rows 2000000] [--files 100] [--repeat 3]

The rows of bench_lakes (8 partitions) with a `seq` column, bulk-inserted in `files` commits of ascending `seq`
ranges (what a bulk insert sorted by `seq` lays out): a copy-on-write version 9 table with the metadata table and
`hoodie.metadata.index.column.stats.enable=true`. The read, `to_arrow(filters=[("seq", ">=", lo), ("seq", "<",
hi)])` over 1% of the `seq` range, runs with the statistics and with `hoodie.metadata.enable=false` among the read
options (no metadata table: every base file opened); the data files each opens are counted. Then an upsert of
10% of the rows (half updates, half inserts) into two copies of the table, one with files + column_stats, one with
the files partition only. Goals (issue 27): the read >= 5x faster with the statistics, fewer files opened; the
upsert with column_stats <= 1.15x the time without.
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import tempfile
from pathlib import Path

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from common import best_of, lakes_data, memory_figures, timed  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.cli.progress import READ, WatchedStorage  # noqa: E402

BASE = {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true", "hoodie.index.type": "SIMPLE",
        "hoodie.parquet.small.file.limit": "0", "hoodie.clean.automatic": "false",
        "hoodie.archive.automatic": "false"}
STATS = {**BASE, "hoodie.metadata.index.column.stats.enable": "true"}


def with_seq(t: pa.Table) -> pa.Table:
    return t.append_column("seq", t["id"])


def build(path: Path, options: dict[str, str], base: pa.Table, files: int) -> HudiTable:
    t = HudiTable.create(str(path), table_name="bench", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="COPY_ON_WRITE", options=options)
    for chunk in np.array_split(np.arange(base.num_rows), files):
        t.write(base.take(pa.array(chunk)), operation="bulk_insert")
    return t


def read_counting(t: HudiTable, filters: list[tuple[str, str, int]], repeat: int) -> tuple[float, int, int]:
    """Best seconds of the filtered read, the data files one read opens, and the rows it returns."""
    opened: list[str] = []
    t.storage = WatchedStorage(t.storage, lambda kind, rel: opened.append(rel) if kind == READ else None)
    seconds, out = best_of(repeat, lambda: t.to_arrow(filters=filters))
    opened.clear()
    t.to_arrow(filters=filters)
    return seconds, len(set(opened)), out.num_rows


def run(rows: int, files: int, repeat: int) -> dict[str, float]:
    base, upsert, _ = lakes_data(rows)
    base, upsert = with_seq(base), with_seq(upsert)
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_skipping_"))
    f: dict[str, float] = {"rows": rows, "files": files}
    try:
        build(work / "stats", STATS, base, files)
        lo = rows // 2
        filters = [("seq", ">=", lo), ("seq", "<", lo + rows // 100)]
        f["skipping_read_s"], f["skipping_files"], got = read_counting(HudiTable(str(work / "stats")), filters, repeat)
        f["full_read_s"], f["full_files"], expected = read_counting(
            HudiTable(str(work / "stats"), options={"hoodie.metadata.enable": "false"}), filters, repeat)
        assert got == expected == rows // 100, (got, expected)
        f["read_speedup"] = f["full_read_s"] / f["skipping_read_s"]

        shutil.copytree(work / "stats", work / "stats_up")
        build(work / "files_only", BASE, base, files)
        f["upsert_stats_s"], _ = timed(lambda: HudiTable(str(work / "stats_up")).write(upsert))
        f["upsert_files_only_s"], _ = timed(lambda: HudiTable(str(work / "files_only")).write(upsert))
        f["upsert_ratio"] = f["upsert_stats_s"] / f["upsert_files_only_s"]
    finally:
        shutil.rmtree(work, ignore_errors=True)
    f.update(repeat=repeat, **memory_figures())
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--files", type=int, default=100, help="bulk insert commits (base files per partition)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    f = run(args.rows, args.files, args.repeat)
    print(f"data skipping, {args.rows:,} rows, 8 partitions x {args.files} sorted bulk inserts; best of "
          f"{args.repeat}; a filter matching 1% of the rows")
    print(f"  read with column_stats    {f['skipping_read_s']:>8.3f} s  {f['skipping_files']:>6.0f} files opened")
    print(f"  read without (listing)    {f['full_read_s']:>8.3f} s  {f['full_files']:>6.0f} files opened")
    print(f"  speed-up                  {f['read_speedup']:>8.2f}x  (goal >= 5x)")
    print(f"  upsert 10%: files + column_stats {f['upsert_stats_s']:.2f} s, files only "
          f"{f['upsert_files_only_s']:.2f} s, ratio {f['upsert_ratio']:.2f}x (goal <= 1.15x)")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
