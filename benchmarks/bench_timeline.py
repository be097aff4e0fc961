"""A long timeline, version 9 against version 6: time travel to archived commits and reads of the latest state.

    ./run py benchmarks/bench_timeline.py [--commits 1000] [--repeat 5]

Writes the same `--commits` small upserts into a version 6 and a version 9 copy-on-write table (archiving on
with Hudi's default window 20/30, cleaning off so every file version stays), so almost all commits end up
archived: in `.hoodie/archived/` (version 6) or the LSM history `.hoodie/timeline/history/` (version 9). Then
times, best of `--repeat`, each read from a new HudiTable with the archive parse cache emptied (what a new
process pays): time travel to an archived commit a tenth of the way in, time travel to one half way, the latest
snapshot, and `HudiTable.history()`. Checks that both versions give the same rows.
Goal (issue 26): time travel through version 9's history no slower than through version 6's archive.
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.timeline import archived  # noqa: E402

KEYS = 2000


def build(path: Path, version: int, commits: int) -> list[str]:
    t = HudiTable.create(str(path), table_name="long", record_key="id", ordering_field="ts", partition_by="p",
                         table_type="COPY_ON_WRITE", buckets=2,
                         options={"hoodie.write.table.version": str(version), "hoodie.clean.automatic": "false"})
    times = []
    for n in range(commits):
        ids = [(n * 37 + k) % KEYS for k in range(20)]
        times.append(t.write(pa.table({"id": [f"k{i}" for i in ids], "ts": [n] * 20,
                                       "p": [f"p{i % 4}" for i in ids], "v": [float(n)] * 20})))
    return times


def cold(path: Path, read: Any, repeat: int) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(repeat):
        archived._PARSED.clear()  # noqa: SLF001 - the cache a new process starts without
        start = time.perf_counter()
        out = read(HudiTable(str(path)))
        best = min(best, time.perf_counter() - start)
    return best, out


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commits", type=int, default=1000)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--json", help="write the figures to this file")
    args = ap.parse_args(argv)
    f: dict[str, float] = {"commits": args.commits}
    with tempfile.TemporaryDirectory() as tmp:
        results: dict[int, dict[str, Any]] = {}
        for version in (6, 9):
            path = Path(tmp) / f"v{version}"
            start = time.perf_counter()
            times = build(path, version, args.commits)
            f[f"v{version}_build_s"] = time.perf_counter() - start
            table = HudiTable(str(path))
            active = [i for i in table.timeline() if i.is_completed]
            f[f"v{version}_active_commits"] = len(active)
            early, middle = times[len(times) // 10], times[len(times) // 2]
            reads = {
                "travel_early": lambda t, at=early: t.to_arrow(as_of=at),
                "travel_middle": lambda t, at=middle: t.to_arrow(as_of=at),
                "latest": lambda t: t.to_arrow(),
                "history": lambda t: t.history(include_all=True),
            }
            results[version] = {}
            for name, read in reads.items():
                f[f"v{version}_{name}_s"], results[version][name] = cold(path, read, args.repeat)
        for name in ("travel_early", "travel_middle", "latest"):
            cols = ["id", "ts", "v"]
            ours6 = results[6][name].select(cols).sort_by("id").to_pylist()
            ours9 = results[9][name].select(cols).sort_by("id").to_pylist()
            assert ours6 == ours9 and ours6, name
            f[f"v9_{name}_cost"] = f[f"v9_{name}_s"] / f[f"v6_{name}_s"]
        f["v9_history_cost"] = f["v9_history_s"] / f["v6_history_s"]
    print(f"long timeline: {args.commits} commits, copy-on-write, archiving at 20/30 (active: v6 "
          f"{f['v6_active_commits']:.0f}, v9 {f['v9_active_commits']:.0f} instants), best of {args.repeat}, cold cache")
    for name, label in (("travel_early", "time travel to an archived commit (10%)"),
                        ("travel_middle", "time travel to an archived commit (50%)"),
                        ("latest", "latest snapshot"), ("history", "HudiTable.history(include_all=True)")):
        print(f"  {label:42s} v6 {f[f'v6_{name}_s']:.3f} s   v9 {f[f'v9_{name}_s']:.3f} s   "
              f"v9/v6 {f[f'v9_{name}_cost']:.2f}x")
    print("  goal: time travel through version 9's history no slower than version 6's archive (<= 1.0x)")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=2))
    return f


if __name__ == "__main__":
    main()
