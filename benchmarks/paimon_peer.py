"""Apache Paimon (pypaimon 2.1) on the rows and steps of bench_lakes.py: load, upsert of 10%, delete of 1%,
merge-on-read snapshot read; checks the final rows against the checksum the data implies.

    .venv/bin/python benchmarks/paimon_peer.py [--rows 2000000] [--runs 3] [--json out.json] [--pure-python]

pypaimon 2.1 pins pyarrow < 20 and so cannot share the project's environment (pyarrow 26): this file, run by the
project's interpreter, builds a virtual environment of its own at benchmarks/.paimon-venv (pypaimon, pypaimon-rust
and the project's numpy version, so the random rows are the same), reused while its requirements stand, and runs
itself there with --child. If that environment cannot be built it prints why and writes {"skipped": reason}.
The child imports only common.py (numpy and pyarrow) from the project, to make the same rows as bench_lakes.

The table: primary key (dt, id) (Paimon needs the partition field in the key), partitioned by dt, 4 fixed
buckets, sequence.field ts, on a local filesystem catalog. Deletes are rows whose row kind is -D, given by a
string column (rowkind.field = _kind, "+I" on the other writes): pypaimon's way to delete from a primary-key
table. By default the Rust path of pypaimon-rust writes the data files, plans the scan and merges on read
(write.native.enabled, read.native.enabled); commits stay in Python (pypaimon commits natively only through a
REST catalog). --pure-python runs pypaimon's Python reader and writer instead.
"""

from __future__ import annotations

import argparse
import json
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from functools import partial
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from common import checksum, lakes_data, timed  # noqa: E402

VENV = Path(__file__).parent / ".paimon-venv"
REQUIREMENTS = ["pypaimon==2.1.0", "pypaimon-rust==0.4.0", f"numpy=={np.__version__}"]
STEPS = ["load", "upsert", "delete", "read"]


# ---- driver: the project's interpreter -----------------------------------------------------------------------

def ensure_venv() -> Path:
    """The venv's python, creating the venv (or rebuilding it when its requirements changed); raises
    RuntimeError with the reason when that fails."""
    python, marker = VENV / "bin" / "python", VENV / "requirements.txt"
    if python.exists() and marker.exists() and marker.read_text().split() == REQUIREMENTS:
        return python
    start = time.perf_counter()
    for cmd in ([sys.executable, "-m", "venv", "--clear", str(VENV)],
                [str(python), "-m", "pip", "install", "--quiet", *REQUIREMENTS]):
        try:
            done = subprocess.run(cmd, capture_output=True, text=True, timeout=900)
        except (OSError, subprocess.TimeoutExpired) as e:
            raise RuntimeError(f"{' '.join(cmd[:4])} failed: {e}") from e
        if done.returncode != 0:
            shutil.rmtree(VENV, ignore_errors=True)
            last = (done.stderr.strip() or done.stdout.strip() or "no output").splitlines()[-1]
            raise RuntimeError(f"{' '.join(cmd[:4])} failed (exit {done.returncode}): {last}")
    marker.write_text("\n".join(REQUIREMENTS) + "\n")
    print(f"created {VENV} ({', '.join(REQUIREMENTS)}) in {time.perf_counter() - start:.1f} s")
    return python


def drive(args: argparse.Namespace) -> dict[str, Any]:
    try:
        python = ensure_venv()
    except RuntimeError as e:
        print(f"Paimon skipped: cannot build its environment {VENV}: {e}")
        return {"skipped": str(e)}
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "paimon.json"
        cmd = [str(python), __file__, "--child", "--rows", str(args.rows), "--runs", str(args.runs),
               "--json", str(out)] + (["--pure-python"] if args.pure_python else [])
        subprocess.run(cmd, check=True)
        f = json.loads(out.read_text())
    print(f"Paimon (pypaimon {f['pypaimon_version']}), {f['rows']:,} rows, 8 partitions, 4 buckets; median of "
          f"{f['runs']} runs; final snapshot {f['final_rows']:,} rows, checksum {f['checksum']} as expected")
    print(f"  path: {f['path']}")
    print(f"  {'step':8s} {'seconds':>9s} {'rows/s':>12s}")
    for step in STEPS:
        count = {"load": f["rows"], "upsert": f["upsert_rows"],
                 "delete": f["delete_rows"]}.get(step, f["final_rows"])
        print(f"  {step:8s} {f[f'paimon_{step}_s']:>9.3f} {count / f[f'paimon_{step}_s']:>12,.0f}")
    return f


# ---- child: inside the paimon venv ---------------------------------------------------------------------------

def expected_rows(base: pa.Table, upsert: pa.Table, deletes: pa.Table) -> pa.Table:
    """(id, amount) of base ⊕ upsert ⊖ deletes, ordered by id."""
    size = max(len(base), int(upsert["id"].to_numpy().max()) + 1)
    amount, alive = np.zeros(size), np.zeros(size, dtype=bool)
    for t in (base, upsert):
        ids = t["id"].to_numpy()
        amount[ids], alive[ids] = t["amount"].to_numpy(), True
    alive[deletes["id"].to_numpy()] = False
    keep = np.flatnonzero(alive)
    return pa.table({"id": keep, "amount": amount[keep]})


def with_kind(t: pa.Table, kind: str) -> pa.Table:
    return t.append_column("_kind", pa.array([kind] * t.num_rows, pa.string()))


def one_run(n: int, native: bool, work: Path) -> dict[str, Any]:
    from pypaimon import CatalogFactory, Schema
    from pypaimon.read.table_read import TableRead
    from pypaimon.write.native_write import NativeTableWrite

    base, upsert, deletes = lakes_data(n)
    expected = checksum(expected_rows(base, upsert, deletes))
    assert expected[0] == n + (n // 10 - n // 20) - n // 100, expected
    base, upsert, deletes = with_kind(base, "+I"), with_kind(upsert, "+I"), with_kind(deletes, "-D")

    catalog = CatalogFactory.create({"warehouse": str(work)})
    catalog.create_database("bench", True)
    flag = str(native).lower()
    options = {"bucket": "4", "sequence.field": "ts", "rowkind.field": "_kind", "file.format": "parquet",
               "write.native.enabled": flag, "read.native.enabled": flag}
    catalog.create_table("bench.t", Schema.from_pyarrow_schema(
        base.schema, partition_keys=["dt"], primary_keys=["dt", "id"], options=options), False)
    table = catalog.get_table("bench.t")
    writers: set[str] = set()

    def commit(data: pa.Table) -> None:
        builder = table.new_batch_write_builder()
        write, committer = builder.new_write(), builder.new_commit()
        writers.add("Rust" if isinstance(write, NativeTableWrite) else "Python")
        write.write_arrow(data)
        committer.commit(write.prepare_commit())
        write.close()
        committer.close()

    # pypaimon falls back from the Rust reader silently; its fallback hook records why
    fallbacks: list[str] = []
    fallback = TableRead._native_fallback

    def record_fallback(self: TableRead, reason: str, *a: object, **kw: object) -> object:
        fallbacks.append(reason)
        return fallback(self, reason, *a, **kw)

    def read() -> pa.Table:
        builder = table.new_read_builder()
        return builder.new_read().to_arrow(builder.new_scan().plan().splits())

    f: dict[str, Any] = {}
    for step, data in (("load", base), ("upsert", upsert), ("delete", deletes)):
        f[f"paimon_{step}_s"], _ = timed(partial(commit, data))
    TableRead._native_fallback = record_fallback
    try:
        f["paimon_read_s"], snapshot = timed(read)
    finally:
        TableRead._native_fallback = fallback
    got = checksum(snapshot.sort_by("id"))
    assert got == expected, f"Paimon's snapshot {got} differs from the expected {expected}"
    reader = ("Python" if not native else "Rust" if not fallbacks
              else f"Python (Rust fell back: {'; '.join(fallbacks)})")
    f.update(rows=n, upsert_rows=upsert.num_rows, delete_rows=deletes.num_rows, final_rows=got[0], checksum=got,
             path=f"write: {'+'.join(sorted(writers))}; plan and merge-on-read: {reader}; commit: Python")
    return f


def child(args: argparse.Namespace) -> None:
    from importlib.metadata import version

    runs = []
    for _ in range(args.runs):
        with tempfile.TemporaryDirectory(prefix="paimon_peer_") as work:
            runs.append(one_run(args.rows, not args.pure_python, Path(work)))
    f = {**runs[-1], **{f"paimon_{s}_s": statistics.median(r[f"paimon_{s}_s"] for r in runs) for s in STEPS}}
    rust = "" if args.pure_python else f", pypaimon-rust {version('pypaimon-rust')}"
    f.update(runs=args.runs, pypaimon_version=version("pypaimon"),
             path=f"{f['path']} (pypaimon {version('pypaimon')}{rust})")
    Path(args.json).write_text(json.dumps(f, indent=1))


def main(argv: list[str] | None = None) -> dict[str, Any] | None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--rows", type=int, default=2_000_000)
    ap.add_argument("--runs", type=int, default=3)
    ap.add_argument("--json", help="write the figures to this file")
    ap.add_argument("--pure-python", action="store_true", help="pypaimon's Python writer and reader, not Rust")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.child:
        child(args)
        return None
    f = drive(args)
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
