"""Lazy reads and other engines (issue 31) on bench_lakes' table, in one process.

    ./run py benchmarks/bench_lazy.py [--rows 2000000] [--repeat 5]

The table: bench_lakes' rows (8 partitions, 4 buckets, merge-on-read) loaded with bulk_insert, then an upsert of
10% and a delete of 1%, so every file slice has log files to merge. Figures, each the median of `repeat` runs:
- `scan().filter(one partition).select(2 columns).collect()` against `to_polars()` followed by the same filter
  and selection (goal: >= 5x);
- `scan().head(10).collect()` of the snapshot (goal: < 0.1 s);
- DuckDB over the merge-on-read snapshot through `to_batch_reader()` (a filtered aggregate; no goal);
- after compaction, a DuckDB aggregate over `to_pyarrow_dataset()` against DuckDB's own `read_parquet` of the
  same base files (goal: >= 0.9x), and the same over the view `to_duckdb()` registers (read_parquet of the base
  files), with the registration timed on its own. Each of these reads also has its CPU seconds (every thread
  of the process), and pyarrow's own scan of the aggregate's columns in the dataset is timed in the same rounds:
  DuckDB reads a pyarrow Dataset through pyarrow's scanner, so that scan is a floor of the dataset's read.
Every pair of reads is checked to give the same answer.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import polars as pl

sys.path.insert(0, str(Path(__file__).parent))
from common import PARTITIONS, lakes_data  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402

AGGREGATE = "SELECT dt, count(*) AS n, sum(amount) AS total, max(name) AS last FROM {} GROUP BY dt ORDER BY dt"
AGGREGATE_COLUMNS = ["dt", "amount", "name"]  # the columns AGGREGATE reads


def median_time(repeat: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The median seconds of `repeat` calls of `fn`, and its last result."""
    times, out = [], None
    for _ in range(repeat):
        out = None
        start = time.perf_counter()
        out = fn()
        times.append(time.perf_counter() - start)
    return statistics.median(times), out


def interleaved_medians(repeat: int, fns: dict[str, Callable[[], Any]]) -> dict[str, tuple[float, float, Any]]:
    """The median seconds and median CPU seconds (all the process's threads) of each function, and its last
    result, the functions called in turn `repeat` times."""
    times: dict[str, list[float]] = {name: [] for name in fns}
    cpu: dict[str, list[float]] = {name: [] for name in fns}
    out: dict[str, Any] = {}
    for _ in range(repeat):
        for name, fn in fns.items():
            start, start_cpu = time.perf_counter(), time.process_time()
            out[name] = fn()
            times[name].append(time.perf_counter() - start)
            cpu[name].append(time.process_time() - start_cpu)
    return {name: (statistics.median(times[name]), statistics.median(cpu[name]), out[name]) for name in fns}


def build(work: Path, rows: int) -> HudiTable:
    base, upsert, deletes = lakes_data(rows)
    t = HudiTable.create(str(work / "hudi"), table_name="bench", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=4,
                         options={"compaction.schedule.enabled": "false", "hoodie.clean.automatic": "false"})
    t.write(base, operation="bulk_insert")
    t.write(upsert)
    t.write(deletes.select(["id", "dt"]), operation="delete")
    return t


def measure(t: HudiTable, repeat: int) -> dict[str, float]:
    import duckdb

    f: dict[str, float] = {}
    part = PARTITIONS[3]
    f["eager_filter_s"], eager = median_time(repeat, lambda: t.to_polars().filter(pl.col("dt") == part)
                                              .select("id", "amount"))
    f["scan_filter_s"], lazy = median_time(repeat, lambda: t.scan().filter(pl.col("dt") == part)
                                           .select("id", "amount").collect())
    assert lazy.sort("id").equals(eager.sort("id")), "scan() and to_polars() disagree"
    f["scan_filter_ratio"] = f["eager_filter_s"] / f["scan_filter_s"]
    f["partition_rows"] = lazy.height

    f["head_s"], head = median_time(repeat, lambda: t.scan().head(10).collect())
    assert head.height == 10

    query = "SELECT count(*), sum(amount) FROM reader WHERE flag = 1"

    def mor_duckdb() -> Any:
        reader = t.to_batch_reader(columns=["amount", "flag"])  # noqa: F841 - DuckDB finds it by name
        return duckdb.sql(query).fetchall()

    f["duckdb_mor_stream_s"], streamed = median_time(repeat, mor_duckdb)
    expected = t.to_polars(columns=["amount", "flag"]).filter(pl.col("flag") == 1)
    assert streamed[0][0] == expected.height and abs(streamed[0][1] - expected["amount"].sum()) < 1e-3 * expected.height

    t.compact()
    dataset = t.to_pyarrow_dataset()
    files = [t.storage.full(p) for p in dataset.files]

    def through_dataset() -> Any:
        ds = t.to_pyarrow_dataset()  # noqa: F841 - DuckDB finds it by name
        return duckdb.sql(AGGREGATE.format("ds")).fetchall()

    def read_parquet() -> Any:
        return duckdb.sql(AGGREGATE.format(f"read_parquet({files!r})")).fetchall()

    f["duckdb_view_register_s"], con = median_time(repeat, t.to_duckdb)

    def over_view() -> Any:
        return con.sql(AGGREGATE.format("hudi")).fetchall()

    def pyarrow_scan() -> int:
        return sum(b.num_rows for b in dataset.scanner(columns=AGGREGATE_COLUMNS).to_reader())

    # the DuckDB reads take turns, so a change in the machine's load weighs on each alike
    medians = interleaved_medians(repeat, {"read_parquet": read_parquet, "dataset": through_dataset,
                                           "view": over_view, "pyarrow_scan": pyarrow_scan})
    f["duckdb_read_parquet_s"], f["duckdb_read_parquet_cpu_s"], native = medians["read_parquet"]
    f["duckdb_dataset_s"], f["duckdb_dataset_cpu_s"], ours = medians["dataset"]
    f["duckdb_view_s"], f["duckdb_view_cpu_s"], viewed = medians["view"]
    f["pyarrow_scan_s"], f["pyarrow_scan_cpu_s"], scanned = medians["pyarrow_scan"]
    assert scanned == dataset.count_rows()
    assert [r[:2] + r[3:] for r in ours] == [r[:2] + r[3:] for r in native], "dataset and read_parquet disagree"
    assert all(abs(a[2] - b[2]) < 1e-6 * abs(b[2]) for a, b in zip(ours, native, strict=True))
    f["duckdb_dataset_ratio"] = f["duckdb_read_parquet_s"] / f["duckdb_dataset_s"]

    assert [r[:2] + r[3:] for r in viewed] == [r[:2] + r[3:] for r in native], "to_duckdb and read_parquet disagree"
    f["duckdb_view_ratio"] = f["duckdb_read_parquet_s"] / f["duckdb_view_s"]
    f["duckdb_view_first_ratio"] = f["duckdb_read_parquet_s"] / (f["duckdb_view_s"] + f["duckdb_view_register_s"])
    f["base_files"] = len(files)
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_lazy_"))
    try:
        f = measure(build(work, args.rows), args.repeat)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    f.update(rows=args.rows, repeat=args.repeat)
    print(f"lazy reads and engines, {args.rows:,} rows (8 partitions x 4 buckets, merge-on-read with log files); "
          f"median of {args.repeat}; results checked")
    print(f"  scan().filter(one partition).select(2 columns): {f['scan_filter_s']:.3f} s vs to_polars() then the "
          f"same: {f['eager_filter_s']:.3f} s = {f['scan_filter_ratio']:.1f}x (goal >= 5x; {f['partition_rows']:,.0f} "
          "rows)")
    print(f"  scan().head(10): {f['head_s']:.3f} s (goal < 0.1 s)")
    print(f"  DuckDB filtered aggregate over the merge-on-read snapshot via to_batch_reader(): "
          f"{f['duckdb_mor_stream_s']:.3f} s")
    print(f"  after compaction, DuckDB aggregate via to_pyarrow_dataset(): {f['duckdb_dataset_s']:.3f} s vs "
          f"read_parquet of the same {f['base_files']:.0f} files: {f['duckdb_read_parquet_s']:.3f} s = "
          f"{f['duckdb_dataset_ratio']:.2f}x (goal >= 0.9x)")
    print(f"    CPU: {f['duckdb_dataset_cpu_s']:.3f} s vs {f['duckdb_read_parquet_cpu_s']:.3f} s; pyarrow's own scan of "
          f"the 3 columns in the dataset, which DuckDB's read of it runs: {f['pyarrow_scan_s']:.3f} s, "
          f"CPU {f['pyarrow_scan_cpu_s']:.3f} s")
    print(f"  the same over the view to_duckdb() registers: {f['duckdb_view_s']:.3f} s = {f['duckdb_view_ratio']:.2f}x "
          f"read_parquet (registering it: {f['duckdb_view_register_s']:.3f} s, once; with it: "
          f"{f['duckdb_view_first_ratio']:.2f}x)")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
