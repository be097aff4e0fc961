"""Upserts into tables with Apache Hudi's lookup indexes (SIMPLE, BLOOM, RECORD_INDEX) against deltalake's MERGE of the
same rows.

    ./run py benchmarks/bench_index.py [--rows 2000000] [--runs 3]

Two scenarios, each with the sizes of bench_lakes (8 partitions, an upsert of 10%: half updates, half new ids;
a delete of 1%), deltalake running a MERGE on (id, dt) of the same rows in the same run:

- random: the rows of bench_lakes. A load of `rows` in one commit, an upsert whose updates hit random existing
  ids, a small upsert of 1% (the same mix: where an index that finds keys, RECORD_INDEX, should beat one that
  reads the table's keys) and a delete of random ids. hudi-py writes two merge-on-read tables created with
  `hoodie.index.type` SIMPLE and BLOOM (tagging reads the record keys of the partitions the upsert touches; as in
  Apache Hudi, updates go to log files and inserts fill the small base files, which are rewritten), and a version
  9 one with RECORD_INDEX (tagging looks the keys up in the metadata table's record index). Every file covers the
  whole key range, so Hudi's bloom index must read every file's keys, as SIMPLE does.
- time-ordered: the table Hudi's bloom index is meant for (Hudi's docs on choosing an index: keys with a time
  prefix or increasing ids). Ids of one width (so their digits order as the numbers do) arrive in increasing
  order, loaded by ORDERED_LOADS bulk_insert commits, so each partition's file groups cover narrow key ranges;
  the upsert's updates are late updates of recent keys (random ids of the newest load) and its new ids lie above
  all existing ones; the delete removes random ids of the newest load as well. SIMPLE and BLOOM merge-on-read
  tables; deltalake appends the same loads (its MERGE prunes files by their id statistics too).

Arrow's allocator runs without transparent huge pages (common.without_huge_pages, as in bench_lakes). Each run
builds the tables anew; figures are medians over the runs. Memory: the growth of this process's peak
RSS during the step (the kernel's high-water mark, reset before it). Checks that every table ends with the same
rows as deltalake's (count and checksum). Goals (issue 28): SIMPLE upsert >= 2x deltalake's MERGE (random), BLOOM
>= 3x (time-ordered), the peak RSS growth of each upsert <= deltalake's.
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
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from common import (  # noqa: E402
    checksum,
    lakes_data,
    make_rows,
    memory_figures,
    timed_step,
    without_huge_pages,
)

from hudi_ds import HudiTable  # noqa: E402

INDEXES = ("simple", "bloom", "record_index")
# RECORD_INDEX lives in the metadata table, which version 8/9 tables have
TABLE_OPTIONS = {"record_index": {"hoodie.write.table.version": "9"}}
STEPS = ("load", "upsert", "small_upsert", "delete")
ORDERED_INDEXES = ("simple", "bloom")
ORDERED_STEPS = ("load", "upsert", "delete")
ORDERED_LOADS = 10
# each load makes file groups of its own, as Apache Hudi's bulk_insert does (it fills no small files) and as a
# table whose files are full takes new keys; compaction, a table service of its own (Apache Hudi's Spark writer
# runs none inline by default), is not scheduled: the random scenario's two commits run none either
ORDERED_OPTIONS = {"hoodie.parquet.small.file.limit": "0", "compaction.schedule.enabled": "false"}
FIRST_ORDERED_ID = 10**12  # ids of one width: their decimal digits, Hudi's record keys, order as the numbers do


def one_run(rows: int, work: Path) -> dict[str, float]:
    from deltalake import DeltaTable, write_deltalake

    base, upsert, deletes = lakes_data(rows)
    small = _small_upsert(rows)
    f: dict[str, float] = {}
    dpath = str(work / "delta")
    timed_step(f, "delta_load", lambda: write_deltalake(dpath, base, partition_by=["dt"], mode="overwrite"))
    timed_step(f, "delta_upsert", lambda: DeltaTable(dpath).merge(
        upsert, predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_update_all().when_not_matched_insert_all().execute())
    timed_step(f, "delta_small_upsert", lambda: DeltaTable(dpath).merge(
        small, predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_update_all().when_not_matched_insert_all().execute())
    timed_step(f, "delta_delete", lambda: DeltaTable(dpath).merge(
        deletes.select(["id", "dt"]), predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_delete().execute())
    expected = checksum(DeltaTable(dpath).to_pyarrow_table().select(["id", "amount"]))

    for index in INDEXES:
        t = HudiTable.create(str(work / index), table_name="bench", record_key="id", ordering_field="ts",
                             partition_by="dt", options={"hoodie.index.type": index.upper(),
                                                         **TABLE_OPTIONS.get(index, {})})
        timed_step(f, f"{index}_load", lambda t=t: t.write(base, operation="bulk_insert"))
        timed_step(f, f"{index}_upsert", lambda t=t: t.write(upsert))
        timed_step(f, f"{index}_small_upsert", lambda t=t: t.write(small))
        timed_step(f, f"{index}_delete", lambda t=t: t.write(deletes.select(["id", "dt"]), operation="delete"))
        got = checksum(t.to_arrow(columns=["id", "amount"]))
        assert got == expected, f"hudi-py {index} table read {got}, deltalake {expected}"
    f.update(rows=rows, upsert_rows=upsert.num_rows, delete_rows=deletes.num_rows)
    return f


def ordered_data(rows: int) -> tuple[list[pa.Table], pa.Table, pa.Table]:
    """The time-ordered scenario: ORDERED_LOADS loads of increasing ids, an upsert of 10% (half updates of random
    ids of the newest load, half ids above all) and a delete of 1% (random ids of the newest load)."""
    ids = FIRST_ORDERED_ID + np.arange(rows, dtype=np.int64)
    loads = [make_rows(part, ts=1) for part in np.array_split(ids, ORDERED_LOADS)]
    newest = np.array_split(ids, ORDERED_LOADS)[-1]
    rng = np.random.default_rng(3)
    k = rows // 10
    upd = rng.choice(newest, size=min(k // 2, len(newest)), replace=False)
    upsert = make_rows(np.concatenate([upd, FIRST_ORDERED_ID + rows + np.arange(k - len(upd), dtype=np.int64)]),
                       ts=2, seed=1)
    deletes = make_rows(rng.choice(newest, size=rows // 100, replace=False), ts=3, seed=2)
    return loads, upsert, deletes


def ordered_run(rows: int, work: Path) -> dict[str, float]:
    """The time-ordered scenario's figures (prefixed `ordered_`)."""
    from deltalake import DeltaTable, write_deltalake

    loads, upsert, deletes = ordered_data(rows)
    f: dict[str, float] = {}
    dpath = str(work / "ordered_delta")

    def delta_load() -> None:
        for load in loads:
            write_deltalake(dpath, load, partition_by=["dt"], mode="append")

    timed_step(f, "ordered_delta_load", delta_load)
    timed_step(f, "ordered_delta_upsert", lambda: DeltaTable(dpath).merge(
        upsert, predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_update_all().when_not_matched_insert_all().execute())
    timed_step(f, "ordered_delta_delete", lambda: DeltaTable(dpath).merge(
        deletes.select(["id", "dt"]), predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_delete().execute())
    expected = checksum(DeltaTable(dpath).to_pyarrow_table().select(["id", "amount"]))
    for index in ORDERED_INDEXES:
        t = HudiTable.create(str(work / f"ordered_{index}"), table_name="bench", record_key="id",
                             ordering_field="ts", partition_by="dt", options={"hoodie.index.type": index.upper(), **ORDERED_OPTIONS})

        def load(t: HudiTable = t) -> None:
            for part in loads:
                t.write(part, operation="bulk_insert")

        timed_step(f, f"ordered_{index}_load", load)
        timed_step(f, f"ordered_{index}_upsert", lambda t=t: t.write(upsert))
        timed_step(f, f"ordered_{index}_delete", lambda t=t: t.write(deletes.select(["id", "dt"]),
                                                                     operation="delete"))
        got = checksum(t.to_arrow(columns=["id", "amount"]))
        assert got == expected, f"hudi-py time-ordered {index} table read {got}, deltalake {expected}"
    return f


def _small_upsert(rows: int) -> pa.Table:
    """1% of `rows`: half updates of random loaded ids, half ids no other step writes."""
    rng = np.random.default_rng(5)
    k = max(2, rows // 100)
    ids = np.concatenate([rng.choice(rows, size=k // 2, replace=False),
                          np.arange(2 * rows, 2 * rows + k - k // 2)]).astype(np.int64)
    return make_rows(ids, ts=4, seed=4)


def run(rows: int, runs: int) -> dict[str, float]:
    """Median figures over `runs` fresh runs, with the hudi-py / deltalake speed ratios."""
    all_runs = []
    for _ in range(runs):
        work = Path(tempfile.mkdtemp(prefix="hudi_ds_index_"))
        try:
            all_runs.append({**one_run(rows, work), **ordered_run(rows, work)})
        finally:
            shutil.rmtree(work, ignore_errors=True)
    f = {key: statistics.median(r[key] for r in all_runs) for key in all_runs[0]}
    for index in INDEXES:
        for step in STEPS:
            f[f"{index}_{step}_ratio"] = f[f"delta_{step}_s"] / f[f"{index}_{step}_s"]
    for index in ORDERED_INDEXES:
        for step in ORDERED_STEPS:
            f[f"ordered_{index}_{step}_ratio"] = f[f"ordered_delta_{step}_s"] / f[f"ordered_{index}_{step}_s"]
    f.update(runs=runs, **memory_figures())
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    allocator = without_huge_pages(__file__, argv)
    f = run(args.rows, args.runs)
    print(f"hudi-py lookup indexes vs deltalake, {args.rows:,} rows, 8 partitions, merge-on-read; median of "
          f"{args.runs} runs; checksums match; {allocator}")
    for title, prefix, steps, indexes in (("random updates, one load", "", STEPS, INDEXES),
                                          (f"time-ordered keys, {ORDERED_LOADS} loads, updates of the newest",
                                           "ordered_", ORDERED_STEPS, ORDERED_INDEXES)):
        print(f"{title}:")
        print(f"  {'step':12s} {'index':12s} {'hudi-py s':>10s} {'deltalake s':>12s} {'speed':>7s}"
              f"   {'RSS growth MiB: hudi-py':>24s} {'deltalake':>10s}")
        for step in steps:
            for index in indexes:
                ours, theirs = f"{prefix}{index}_{step}", f"{prefix}delta_{step}"
                print(f"  {step:12s} {index:12s} {f[f'{ours}_s']:>10.2f} {f[f'{theirs}_s']:>12.2f} "
                      f"{f[f'{ours}_ratio']:>6.2f}x   {f[f'{ours}_rss_growth_mib']:>24,.0f} "
                      f"{f[f'{theirs}_rss_growth_mib']:>10,.0f}")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
