"""hudi-py (Python API) against deltalake (delta-rs) on the same rows and operations.

    ./run py benchmarks/bench_lakes.py [--rows 1000000]

Initial load, upsert of 10% (half updates, half new; deltalake runs a MERGE), delete of 1%, snapshot read,
change feed read of the upsert. Prints rows/s and the hudi-py / deltalake ratio, and checks that both
tables end with the same rows (count and checksum). Goal (issue 7): hudi-py upsert >= 5x deltalake MERGE.
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
import pyarrow.compute as pc

sys.path.insert(0, str(Path(__file__).parent))
from common import checksum, make_rows, memory_figures, timed  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402


def run(rows: int, work: Path) -> dict[str, float]:
    from deltalake import DeltaTable, write_deltalake

    n = rows
    base = make_rows(np.arange(n, dtype=np.int64), ts=1)
    rng = np.random.default_rng(3)
    k = n // 10
    upd = rng.choice(n, size=k // 2, replace=False).astype(np.int64)
    upsert = make_rows(np.concatenate([upd, np.arange(n, n + k - k // 2, dtype=np.int64)]), ts=2, seed=1)
    del_ids = rng.choice(n, size=n // 100, replace=False).astype(np.int64)
    deletes = make_rows(del_ids, ts=3, seed=2)

    f: dict[str, float] = {}
    # --- deltalake
    dpath = str(work / "delta")
    f["delta_load_s"], _ = timed(lambda: write_deltalake(
        dpath, base, partition_by=["dt"], mode="overwrite", configuration={"delta.enableChangeDataFeed": "true"}))
    dt = DeltaTable(dpath)
    f["delta_upsert_s"], _ = timed(lambda: dt.merge(
        upsert, predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_update_all().when_not_matched_insert_all().execute())
    v_upsert = DeltaTable(dpath).version()
    f["delta_delete_s"], _ = timed(lambda: DeltaTable(dpath).merge(
        deletes.select(["id", "dt"]), predicate="t.id = s.id AND t.dt = s.dt", source_alias="s", target_alias="t")
        .when_matched_delete().execute())
    f["delta_read_s"], delta_rows = timed(lambda: DeltaTable(dpath).to_pyarrow_table())
    f["delta_cdf_s"], delta_cdf = timed(lambda: DeltaTable(dpath).load_cdf(
        starting_version=v_upsert, ending_version=v_upsert).read_all())
    delta_cdf = pa.table(delta_cdf)
    delta_rows = pa.table(delta_rows)

    # --- hudi-py
    t = HudiTable.create(str(work / "hudi"), table_name="bench", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=4)
    f["hudi_load_s"], _ = timed(lambda: t.write(base, operation="bulk_insert"))
    f["hudi_upsert_s"], c_up = timed(lambda: t.write(upsert))
    f["hudi_delete_s"], _ = timed(lambda: t.write(deletes.select(["id", "dt"]), operation="delete"))
    f["hudi_read_s"], hudi_rows = timed(t.to_arrow)
    before_upsert = [i.requested_time for i in t.timeline() if i.is_completed][0]
    f["hudi_cdf_s"], hudi_cdf = timed(lambda: t.changes(before_upsert, c_up))

    a, b = checksum(hudi_rows), checksum(delta_rows.select(["id", "amount"]))
    assert a == b, f"final tables differ: hudi-py {a} vs deltalake {b}"
    n_cdf = pc.sum(pc.is_in(hudi_cdf["_change_type"], value_set=pa.array(["insert", "update_postimage"]))).as_py()
    d_cdf = pc.sum(pc.is_in(delta_cdf["_change_type"].cast(pa.string()), value_set=pa.array(["insert", "update_postimage"]))).as_py()
    assert n_cdf == d_cdf == k, (n_cdf, d_cdf, k)
    f.update(rows=n, upsert_rows=k, delete_rows=len(del_ids), final_rows=hudi_rows.num_rows, **memory_figures())
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_lakes_"))
    try:
        f = run(args.rows, work)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"hudi-py vs deltalake, {args.rows:,} rows (8 partitions; checksums match)")
    for step, count in (("load", f["rows"]), ("upsert", f["upsert_rows"]), ("delete", f["delete_rows"]),
                        ("read", f["final_rows"]), ("cdf", f["upsert_rows"])):
        h, d = count / f[f"hudi_{step}_s"], count / f[f"delta_{step}_s"]
        print(f"  {step:7s} hudi-py {h:>13,.0f} rows/s   deltalake {d:>13,.0f} rows/s   ratio {h / d:5.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
