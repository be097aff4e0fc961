"""hudi-py (Python API) against deltalake (delta-rs) on the same rows and operations, in one process.

    ./run py benchmarks/bench_lakes.py [--rows 2000000] [--runs 3]

Steps: initial load (hudi-py bulk_insert; write_deltalake), upsert of 10% (half updates, half new; deltalake runs
a MERGE), delete of 1% (a MERGE delete), snapshot read of the merge-on-read table with its log files (all
columns, then the data columns deltalake returns), change feed of the upsert commit, and the snapshot read after
compaction. Each run builds both tables anew; every figure is the median over the runs. Memory: the growth of
this process's peak RSS during each step (the kernel's high-water mark, reset before the step).
Checks that both tables end with the same rows (count and checksum) and that both change feeds hold the upsert.

Floors of the same files, same run (issue 32): pyarrow writing the eleven columns of the load's base files
(Hudi's five meta columns and the data) into as many files with as many threads as hudi-py's writer, and a
threaded pyarrow dataset read of the snapshot's base files, before and after compaction.
Goals (issue 32): load >= 0.9x its floor; the merge-on-read snapshot of all columns >= 0.8x its floor, after
compaction >= 1x; the data columns >= 0.5x deltalake's read; an upsert with change data written at commit time
(hoodie.table.cdc.enabled; merge-on-read and copy-on-write) >= 1x deltalake's MERGE of the same rows with its
change data feed on; the change feed from change data >= 0.5x deltalake's load_cdf, inferred (CDC off) >= 0.2x; a
copy-on-write load with virtual keys (hoodie.populate.meta.fields=false) >= 0.9x deltalake's; the load's peak RSS
growth <= deltalake's. The load against deltalake stays in the report, warm (here) and as the median over fresh
processes, one per system (--fresh-runs). Issue 16: upsert >= 5x deltalake; delete >= 10x; the read of the data
columns' peak RSS growth <= deltalake's. Issue 27: the upsert into a version 9 table with its metadata table (the
files partition; on by default on version 9) <= 1.15x the upsert into one with hoodie.metadata.enable=false. Apache
Paimon (benchmarks/paimon_peer.py, in its own venv) on the same rows: upsert >= 1x, merge-on-read snapshot >= 1x
(issue 16); the Paimon figures are the median of their own runs in a child process.

Arrow's allocator (mimalloc) runs without transparent huge pages here (MIMALLOC_ALLOW_THP=0 unless set): with them,
this process's later reads spent up to half their time in the kernel zeroing 2 MiB pages for the fragmented
arenas its earlier steps left, which deltalake's reads (jemalloc, no huge pages) do not pay; docs/benchmarks.md.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
import paimon_peer  # noqa: E402
from common import checksum, lakes_data, memory_figures, timed, timed_step, without_huge_pages  # noqa: E402
from fresh_process import fresh_sample  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.write.task import _WRITER_THREADS  # noqa: E402 - the floor writes with as many threads

DATA_COLUMNS = ["id", "name", "amount", "ts", "dt", "flag"]
# step -> rows it handles (filled per run); the order is the order they run in
STEPS = ["load", "upsert", "delete", "read", "read_data", "cdf", "read_compacted"]


# the first load of one system in a fresh process: wall seconds from the library's import to the load's end (the
# rows are built before, with pyarrow and numpy already imported)
_FRESH_LOAD = """
import json, sys, time
sys.path.insert(0, sys.argv[1])
from common import lakes_data
base = lakes_data(int(sys.argv[2]))[0]
start = time.perf_counter()
if sys.argv[3] == "hudi":
    from hudi_ds import HudiTable
    HudiTable.create(sys.argv[4], table_name="bench", record_key="id", ordering_field="ts", partition_by="dt",
                     buckets=4).write(base, operation="bulk_insert")
else:
    from deltalake import write_deltalake
    write_deltalake(sys.argv[4], base, partition_by=["dt"], mode="overwrite",
                    configuration={"delta.enableChangeDataFeed": "true"})
print(json.dumps({"load_s": time.perf_counter() - start}))
"""


def fresh_load_figures(rows: int, runs: int) -> dict[str, float]:
    """The load of each system in fresh processes, one per system and run, the two alternating: medians."""
    seconds: dict[str, list[float]] = {"hudi": [], "delta": []}
    for run in range(runs + 1):  # the first round writes the bytecode caches
        for system in seconds:
            work = Path(tempfile.mkdtemp(prefix="hudi_ds_lakes_fresh_"))
            try:
                load_s = fresh_sample(_FRESH_LOAD, str(Path(__file__).parent), str(rows), system, str(work / "t"))
            finally:
                shutil.rmtree(work, ignore_errors=True)
            if run:
                seconds[system].append(load_s["load_s"])
    hudi, delta = statistics.median(seconds["hudi"]), statistics.median(seconds["delta"])
    return {"fresh_hudi_load_s": hudi, "fresh_delta_load_s": delta, "fresh_load_ratio": delta / hudi}


def slice_base_files(table: HudiTable, root: Path) -> list[Path]:
    """The base files of the table's latest file slices (the read-optimized dataset names them)."""
    return [root / name for name in table.to_pyarrow_dataset(read_optimized=True).files]


def write_floor(files: list[Path], root: Path, out: Path) -> Callable[[], int]:
    """pyarrow writing what `files` hold (all their columns, read into memory first) into as many files under
    `out`, with as many threads as hudi-py's writer and each file's own encodings: its compression, the columns
    it stores with a dictionary (read as Arrow dictionaries, which parquet writes as given) and those with
    statistics, no Arrow schema in the footer. The same bytes with the least work: pyarrow's defaults would
    dictionary-encode and take statistics of every column (unique keys and sequence numbers too), ~4x the CPU of
    these files' encodings; a call that returns the rows written."""
    jobs = []
    for path in files:
        meta = pq.read_metadata(path)
        columns = [meta.row_group(0).column(i) for i in range(meta.num_columns)]
        options = {"compression": columns[0].compression.lower(), "store_schema": False,
                   "use_dictionary": [c.path_in_schema for c in columns if c.has_dictionary_page],
                   "write_statistics": [c.path_in_schema for c in columns if c.is_stats_set]}
        strings = [c.path_in_schema for c in columns if c.has_dictionary_page and c.physical_type == "BYTE_ARRAY"]
        target = out / path.relative_to(root)
        target.parent.mkdir(parents=True, exist_ok=True)
        jobs.append((pq.read_table(path, read_dictionary=strings), target, options))

    def write_one(job: tuple[pa.Table, Path, dict[str, Any]]) -> int:
        rows, target, options = job
        pq.write_table(rows, target, **options)
        return rows.num_rows

    def write_all() -> int:
        with ThreadPoolExecutor(_WRITER_THREADS) as pool:
            return sum(pool.map(write_one, jobs))

    return write_all


def read_floor(files: list[Path]) -> pa.Table:
    """A threaded pyarrow dataset read of `files`, every column."""
    return ds.dataset([str(f) for f in files], format="parquet").to_table(use_threads=True)


def one_run(rows: int, work: Path) -> dict[str, float]:
    from deltalake import DeltaTable, write_deltalake

    n = rows
    base, upsert, deletes = lakes_data(n)
    k, del_ids = upsert.num_rows, deletes["id"]

    f: dict[str, float] = {}
    # --- deltalake
    dpath = str(work / "delta")
    timed_step(f, "delta_load", lambda: write_deltalake(
        dpath, base, partition_by=["dt"], mode="overwrite", configuration={"delta.enableChangeDataFeed": "true"}))
    dt = DeltaTable(dpath)
    timed_step(f, "delta_upsert", lambda: dt.merge(
        upsert, predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_update_all().when_not_matched_insert_all().execute())
    v_upsert = DeltaTable(dpath).version()
    timed_step(f, "delta_delete", lambda: DeltaTable(dpath).merge(
        deletes.select(["id", "dt"]), predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_delete().execute())
    delta_rows = pa.table(timed_step(f, "delta_read", lambda: DeltaTable(dpath).to_pyarrow_table()))
    f["delta_read_data_s"] = f["delta_read_s"]  # deltalake's read returns the data columns only
    f["delta_read_data_rss_growth_mib"] = f["delta_read_rss_growth_mib"]
    delta_cdf = pa.table(timed_step(f, "delta_cdf", lambda: DeltaTable(dpath).load_cdf(
        starting_version=v_upsert, ending_version=v_upsert).read_all()))
    f["delta_read_compacted_s"] = f["delta_read_s"]  # a delta table has no log files to fold away
    f["delta_read_compacted_rss_growth_mib"] = f["delta_read_rss_growth_mib"]

    # --- hudi-py
    t = HudiTable.create(str(work / "hudi"), table_name="bench", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=4)
    timed_step(f, "hudi_load", lambda: t.write(base, operation="bulk_insert"))
    floor_write = write_floor(slice_base_files(t, work / "hudi"), work / "hudi", work / "floor")
    f["floor_load_s"], floor_rows = timed(floor_write)
    del floor_write  # the rows it held
    assert floor_rows == n, (floor_rows, n)
    c_up = timed_step(f, "hudi_upsert", lambda: t.write(upsert))
    timed_step(f, "hudi_delete", lambda: t.write(deletes.select(["id", "dt"]), operation="delete"))
    hudi_rows = timed_step(f, "hudi_read", t.to_arrow)
    bases = slice_base_files(t, work / "hudi")
    f["floor_read_s"], floor_read = timed(lambda: read_floor(bases))
    assert floor_read.num_rows == n and floor_read.num_columns == hudi_rows.num_columns, floor_read.shape
    hudi_data = timed_step(f, "hudi_read_data", lambda: t.to_arrow(columns=DATA_COLUMNS))
    before_upsert = [i.requested_time for i in t.timeline() if i.is_completed][0]
    hudi_cdf = timed_step(f, "hudi_cdf", lambda: t.changes(before_upsert, c_up))
    t.compact()
    compacted = timed_step(f, "hudi_read_compacted", lambda: t.to_arrow(columns=DATA_COLUMNS))
    compacted_all = timed_step(f, "hudi_read_compacted_all", t.to_arrow)
    bases = slice_base_files(t, work / "hudi")
    f["floor_read_compacted_s"], floor_compacted = timed(lambda: read_floor(bases))

    # --- hudi-py with virtual keys (hoodie.populate.meta.fields=false: base files without meta values), copy-on-write
    vk = HudiTable.create(str(work / "hudi_vk"), table_name="bench", record_key="id", ordering_field="ts",
                          partition_by="dt", buckets=4, table_type="COPY_ON_WRITE",
                          options={"hoodie.populate.meta.fields": "false"})
    timed_step(f, "hudi_vk_load", lambda: vk.write(base, operation="bulk_insert"))
    assert checksum(vk.to_arrow(columns=["id", "amount"])) == checksum(base.select(["id", "amount"]))

    # --- hudi-py with change data written at commit time (hoodie.table.cdc.enabled)
    c = HudiTable.create(str(work / "hudi_cdc"), table_name="bench", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=4, options={"hoodie.table.cdc.enabled": "true"})
    c.write(base, operation="bulk_insert")
    c_up_cdc = timed_step(f, "hudi_cdc_upsert", lambda: c.write(upsert))
    timed_step(f, "hudi_cdc_delete", lambda: c.write(deletes.select(["id", "dt"]), operation="delete"))
    before_cdc = [i.requested_time for i in c.timeline() if i.is_completed][0]
    cdc_feed = timed_step(f, "hudi_cdc_cdf", lambda: c.changes(before_cdc, c_up_cdc))
    assert cdc_feed.num_rows == hudi_cdf.num_rows, (cdc_feed.num_rows, hudi_cdf.num_rows)

    # --- the same, copy-on-write: the upsert rewrites base files and writes change data beside them
    cow = HudiTable.create(str(work / "hudi_cow_cdc"), table_name="bench", record_key="id", ordering_field="ts",
                           partition_by="dt", buckets=4, table_type="COPY_ON_WRITE",
                           options={"hoodie.table.cdc.enabled": "true"})
    cow.write(base, operation="bulk_insert")
    c_up_cow = timed_step(f, "hudi_cow_cdc_upsert", lambda: cow.write(upsert))
    cow_feed = cow.changes([i.requested_time for i in cow.timeline() if i.is_completed][0], c_up_cow)
    assert cow_feed.num_rows == hudi_cdf.num_rows, (cow_feed.num_rows, hudi_cdf.num_rows)

    # --- hudi-py version 9 with its metadata table (the default there) and without: the upsert's cost
    v9_sums = []
    for name, enable in (("hudi_v9", "false"), ("hudi_v9_mdt", "true")):
        v9 = HudiTable.create(str(work / name), table_name="bench", record_key="id", ordering_field="ts",
                              partition_by="dt", buckets=4,
                              options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": enable})
        v9.write(base, operation="bulk_insert")
        timed_step(f, f"{name}_upsert", lambda v9=v9: v9.write(upsert))
        v9_sums.append(checksum(v9.to_arrow(columns=["id", "amount"])))
    assert v9_sums[0] == v9_sums[1], v9_sums

    expected = checksum(delta_rows.select(["id", "amount"]))
    for name, got in (("snapshot", hudi_rows), ("data columns", hudi_data), ("after compaction", compacted),
                      ("after compaction, all columns", compacted_all), ("floor after compaction", floor_compacted)):
        assert checksum(got) == expected, f"hudi-py {name} read {checksum(got)} differs from deltalake {expected}"
    n_cdf = pc.sum(pc.is_in(hudi_cdf["_change_type"], value_set=pa.array(["insert", "update_postimage"]))).as_py()
    d_cdf = pc.sum(pc.is_in(delta_cdf["_change_type"].cast(pa.string()),
                            value_set=pa.array(["insert", "update_postimage"]))).as_py()
    assert n_cdf == d_cdf == k, (n_cdf, d_cdf, k)
    f.update(rows=n, upsert_rows=k, delete_rows=len(del_ids), final_rows=hudi_rows.num_rows)
    return f


def step_rows(f: dict[str, float], step: str) -> float:
    return {"load": f["rows"], "upsert": f["upsert_rows"], "delete": f["delete_rows"],
            "cdf": f["upsert_rows"]}.get(step, f["final_rows"])


def run(rows: int, runs: int, fresh_runs: int) -> dict[str, float]:
    """Median figures over `runs` fresh runs, with the hudi-py / deltalake speed and memory ratios."""
    all_runs = []
    for _ in range(runs):
        work = Path(tempfile.mkdtemp(prefix="hudi_ds_lakes_"))
        try:
            all_runs.append(one_run(rows, work))
        finally:
            shutil.rmtree(work, ignore_errors=True)
    f = {key: statistics.median(r[key] for r in all_runs) for key in all_runs[0]}
    for step in STEPS:
        f[f"{step}_ratio"] = f[f"delta_{step}_s"] / f[f"hudi_{step}_s"]
    paimon = paimon_peer.drive(argparse.Namespace(rows=rows, runs=runs, pure_python=False))
    if "skipped" not in paimon:
        f.update({k: v for k, v in paimon.items() if k.startswith("paimon_")}, paimon_path=paimon["path"])
        for step, ours in (("load", "load"), ("upsert", "upsert"), ("delete", "delete"), ("read", "read_data")):
            f[f"{step}_vs_paimon"] = f[f"paimon_{step}_s"] / f[f"hudi_{ours}_s"]
    f["vk_load_ratio"] = f["delta_load_s"] / f["hudi_vk_load_s"]
    if fresh_runs:
        f.update(fresh_load_figures(rows, fresh_runs))
    f["cdc_cdf_ratio"] = f["delta_cdf_s"] / f["hudi_cdc_cdf_s"]
    f["load_floor_ratio"] = f["floor_load_s"] / f["hudi_load_s"]
    f["read_floor_ratio"] = f["floor_read_s"] / f["hudi_read_s"]
    f["read_compacted_floor_ratio"] = f["floor_read_compacted_s"] / f["hudi_read_compacted_all_s"]
    f["cdc_upsert_ratio"] = f["delta_upsert_s"] / f["hudi_cdc_upsert_s"]
    f["cow_cdc_upsert_ratio"] = f["delta_upsert_s"] / f["hudi_cow_cdc_upsert_s"]
    f["cdc_upsert_cost"] = f["hudi_cdc_upsert_s"] / f["hudi_upsert_s"]
    f["cdc_delete_cost"] = f["hudi_cdc_delete_s"] / f["hudi_delete_s"]
    f["metadata_upsert_cost"] = f["hudi_v9_mdt_upsert_s"] / f["hudi_v9_upsert_s"]
    f.update(runs=runs, **memory_figures())
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--fresh-runs", type=int, default=3, help="fresh processes per system timing the load (0: none)")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    allocator = without_huge_pages(__file__, argv)
    f = run(args.rows, args.runs, args.fresh_runs)
    print(f"hudi-py vs deltalake, {args.rows:,} rows, 8 partitions; median of {args.runs} runs; checksums match; "
          f"{allocator}")
    print(f"  {'step':15s} {'hudi-py rows/s':>15s} {'deltalake rows/s':>17s} {'speed':>7s}"
          f"   {'RSS growth MiB: hudi-py':>24s} {'deltalake':>10s}")
    for step in STEPS:
        count = step_rows(f, step)
        h, d = count / f[f"hudi_{step}_s"], count / f[f"delta_{step}_s"]
        print(f"  {step:15s} {h:>15,.0f} {d:>17,.0f} {h / d:>6.2f}x"
              f"   {f[f'hudi_{step}_rss_growth_mib']:>24,.0f} {f[f'delta_{step}_rss_growth_mib']:>10,.0f}")
    print(f"  against the floors of the same files, same run: load {f['load_floor_ratio']:.2f}x pyarrow writing the "
          f"eleven columns of its base files into as many files with {_WRITER_THREADS} threads "
          f"({f['floor_load_s']:.3f} s; goal >= 0.9x); merge-on-read snapshot of all columns "
          f"{f['read_floor_ratio']:.2f}x a threaded pyarrow dataset read of its base files ({f['floor_read_s']:.3f} s; "
          f"goal >= 0.8x), after compaction {f['read_compacted_floor_ratio']:.2f}x ({f['hudi_read_compacted_all_s']:.3f} "
          f"s vs {f['floor_read_compacted_s']:.3f} s; goal >= 1x)")
    if "fresh_load_ratio" in f:
        print(f"  load against deltalake: {f['load_ratio']:.2f}x warm (above), {f['fresh_load_ratio']:.2f}x in a fresh "
              f"process per system ({f['fresh_hudi_load_s']:.3f} s vs {f['fresh_delta_load_s']:.3f} s from the "
              f"library's import to the load's end; median of {args.fresh_runs})")
    if "paimon_read_s" in f:
        print(f"  vs Apache Paimon (pypaimon's Rust reader and writer, its own venv; same rows): load "
              f"{f['load_vs_paimon']:.2f}x, upsert {f['upsert_vs_paimon']:.2f}x, delete {f['delete_vs_paimon']:.2f}x, "
              f"merge-on-read snapshot of the data columns {f['read_vs_paimon']:.2f}x (goals: upsert and snapshot >= 1x)")
    print(f"  virtual keys (hoodie.populate.meta.fields=false, copy-on-write; goal >= 0.9x deltalake): load "
          f"{f['rows'] / f['hudi_vk_load_s']:,.0f} rows/s = {f['vk_load_ratio']:.2f}x deltalake (with meta columns: "
          f"{f['load_ratio']:.2f}x; RSS growth {f['hudi_vk_load_rss_growth_mib']:,.0f} MiB)")
    print(f"  with change data written at commit time (hoodie.table.cdc.enabled, DATA_BEFORE_AFTER): upsert "
          f"{f['cdc_upsert_ratio']:.2f}x deltalake's MERGE with its change data feed on (merge-on-read; "
          f"copy-on-write {f['cow_cdc_upsert_ratio']:.2f}x; goal >= 1x), {f['cdc_upsert_cost']:.2f}x the time "
          f"without, delete {f['cdc_delete_cost']:.2f}x; change feed {f['upsert_rows'] / f['hudi_cdc_cdf_s']:,.0f} "
          f"rows/s = {f['cdc_cdf_ratio']:.2f}x deltalake's load_cdf (goal >= 0.5x; RSS growth "
          f"{f['hudi_cdc_cdf_rss_growth_mib']:,.0f} MiB); the feed inferred without change data (cdf above) "
          f"{f['cdf_ratio']:.2f}x (goal >= 0.2x)")
    print(f"  version 9 with its metadata table (files partition, the default there; goal <= 1.15x): upsert "
          f"{f['hudi_v9_mdt_upsert_s']:.2f} s = {f['metadata_upsert_cost']:.2f}x the {f['hudi_v9_upsert_s']:.2f} s "
          f"without (hoodie.metadata.enable=false)")
    print("  read: the merge-on-read snapshot with its log files, all columns (the five _hoodie_* meta columns "
          "too); read_data: the data columns deltalake returns; read_compacted: the same after compaction. "
          "deltalake's reads are one read of its table (it has no log files to merge)")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
