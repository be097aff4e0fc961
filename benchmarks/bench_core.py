"""Core (no Spark) benchmark: HudiTable writes and reads against pyarrow.parquet as the floor.

    ./run py benchmarks/bench_core.py [--rows 2000000] [--buckets 4] [--table-type MERGE_ON_READ]

Prints rows/s per step and the ratio to the floor, and checks every result against the data it wrote.
Goals (issues 2 and 16): insert >= 0.5x the pyarrow floor; upsert >= 1,000,000 rows/s; snapshot read of the
MOR table with one log file per touched bucket >= 0.4x the floor and >= 2,500,000 rows/s. The floors and the
insert are the best of three runs. Also times the incremental read and the change feed of the upsert commit, and the memory of the largest write (the insert) and read (the snapshot):
this process's peak RSS during each, exact (the kernel's high-water mark, reset before the step). Last, what a
fresh process pays (fresh_process.py): `import hudi_ds` against `import pyarrow` (goal <= 1.5x) and its first read of
the table against the second (goal <= 1.3x, issue 32).
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
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

sys.path.insert(0, str(Path(__file__).parent))
from common import best_of, checksum, make_rows, memory_figures, step_memory  # noqa: E402
from fresh_process import describe, fresh_process_figures  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--buckets", type=int, default=4)
    ap.add_argument("--table-type", default="MERGE_ON_READ")
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    n = args.rows
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_bench_"))
    mem: dict[str, float] = {}
    try:
        base = make_rows(np.arange(n, dtype=np.int64), ts=1)
        # floor: the same rows as plain parquet, one file per partition, written and read by pyarrow
        def floor_write() -> None:
            shutil.rmtree(work / "floor", ignore_errors=True)
            pq.write_to_dataset(base, str(work / "floor"), partition_cols=["dt"], compression="snappy")

        floor_w, _ = best_of(3, floor_write)
        floor_r, floor_t = best_of(3, lambda: pq.read_table(str(work / "floor")))
        assert floor_t.num_rows == n

        # the insert, like its floor, is the best of three (each into a new table; the last one is kept)
        inserts = []
        for _ in range(3):
            shutil.rmtree(work / "hudi", ignore_errors=True)
            table = HudiTable.create(str(work / "hudi"), table_name="bench", record_key="id", ordering_field="ts",
                                     partition_by="dt", table_type=args.table_type, buckets=args.buckets)
            with step_memory(mem, "insert"):
                start = time.perf_counter()
                c_insert = table.write(base, operation="insert")
                inserts.append(time.perf_counter() - start)
        t_insert = min(inserts)

        k = n // 10
        rng = np.random.default_rng(7)
        upd_ids = rng.choice(n, size=k // 2, replace=False).astype(np.int64)
        new_ids = np.arange(n, n + k - k // 2, dtype=np.int64)
        upsert = make_rows(np.concatenate([upd_ids, new_ids]), ts=2, seed=1)
        start = time.perf_counter()
        c_upsert = table.write(upsert, operation="upsert")
        t_upsert = time.perf_counter() - start

        del_ids = rng.choice(n, size=n // 100, replace=False).astype(np.int64)
        deletes = make_rows(del_ids, ts=3, seed=2).select(["id", "ts", "dt"])
        start = time.perf_counter()
        table.write(deletes, operation="delete")
        t_delete = time.perf_counter() - start

        with step_memory(mem, "read"):
            t_read, snap = best_of(2, table.to_arrow)
        # expected final state, computed independently with pyarrow
        kept = base.filter(pc.invert(pc.is_in(base["id"], value_set=pa.array(np.concatenate([upd_ids, del_ids])))))
        upsert_kept = upsert.filter(pc.invert(pc.is_in(upsert["id"], value_set=pa.array(del_ids))))
        expected = pa.concat_tables([kept.select(upsert.column_names), upsert_kept])
        got = checksum(snap)
        want = checksum(expected)
        assert got == want, f"snapshot checksum {got} != expected {want}"
        n_final = snap.num_rows

        # the upsert commit read back after the delete commit: its latest images, then its change feed
        t_inc, inc = best_of(2, lambda: table.incremental(c_insert, c_upsert))
        assert checksum(inc) == checksum(upsert), ("incremental", checksum(inc), checksum(upsert))
        t_cdc, cdc = best_of(1, lambda: table.changes(c_insert, c_upsert))
        kind = cdc["_change_type"]
        post = cdc.filter(pc.is_in(kind, value_set=pa.array(["insert", "update_postimage"])))
        pre = cdc.filter(pc.equal(kind, "update_preimage"))
        assert checksum(post) == checksum(upsert), ("change feed post-images", checksum(post), checksum(upsert))
        want_pre = checksum(base.filter(pc.is_in(base["id"], value_set=pa.array(upd_ids))))
        assert checksum(pre) == want_pre and cdc.num_rows == k + len(upd_ids), ("change feed pre-images", cdc.num_rows)

        fresh = fresh_process_figures(str(work / "hudi"), runs=5)
        figures = {
            "floor_write_rows_s": n / floor_w,
            "floor_read_rows_s": n / floor_r,
            "insert_rows_s": n / t_insert,
            "upsert_rows_s": k / t_upsert,
            "delete_rows_s": len(del_ids) / t_delete,
            "snapshot_read_rows_s": n_final / t_read,
            "incremental_rows_s": inc.num_rows / t_inc,
            "changes_rows_s": cdc.num_rows / t_cdc,
            "input_mib": base.nbytes / 2**20,
            **mem,
            **memory_figures(),
            **fresh,
        }
        print(f"hudi_ds core benchmark: {n:,} rows, {args.table_type}, {args.buckets} buckets x 8 partitions")
        print(f"  pyarrow parquet write (floor)  {figures['floor_write_rows_s']:>14,.0f} rows/s")
        print(f"  pyarrow parquet read  (floor)  {figures['floor_read_rows_s']:>14,.0f} rows/s")
        print(f"  create + insert                {figures['insert_rows_s']:>14,.0f} rows/s"
              f"   {figures['insert_rows_s'] / figures['floor_write_rows_s']:.2f}x floor (goal >= 0.5x)")
        print(f"  upsert 10% (half new)          {figures['upsert_rows_s']:>14,.0f} rows/s   (goal >= 1,000,000)")
        print(f"  delete 1%                      {figures['delete_rows_s']:>14,.0f} rows/s")
        print(f"  snapshot read (base + logs)    {figures['snapshot_read_rows_s']:>14,.0f} rows/s"
              f"   {figures['snapshot_read_rows_s'] / figures['floor_read_rows_s']:.2f}x floor (goal >= 0.4x; >= 2,500,000 rows/s)")
        print(f"  incremental read of the upsert {figures['incremental_rows_s']:>14,.0f} rows/s")
        print(f"  change feed of the upsert      {figures['changes_rows_s']:>14,.0f} rows/s"
              f"   ({cdc.num_rows:,} rows: pre- and post-images, inserts)")
        print(f"  peak RSS: insert {figures['insert_rss_mib']:,.0f} MiB (+{figures['insert_rss_growth_mib']:,.0f} over "
              f"its start, input {figures['input_mib']:,.0f} MiB in Arrow), snapshot read "
              f"{figures['read_rss_mib']:,.0f} MiB (+{figures['read_rss_growth_mib']:,.0f}), whole run "
              f"{figures['peak_rss_mib']:,.0f} MiB")
        print(describe(fresh))
        print(f"  checksum ok: {got}; incremental and change feed match the upsert")
        if args.json:
            Path(args.json).write_text(json.dumps(figures, indent=1))
        return figures
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
