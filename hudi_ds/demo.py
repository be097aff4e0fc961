"""The main job: synthetic ride events upserted into a partitioned MERGE_ON_READ table, read back and
checked against an in-memory model, then shown with the commands to explore it.

    ./run demo [--seconds 30] [--path demo-output/rides] [--batch-rows 20000]
"""

from __future__ import annotations

import argparse
import random
import shutil
import time
from pathlib import Path
from typing import Any

import pyarrow as pa

from hudi_ds import HudiTable

CITIES = ["amsterdam", "berlin", "chennai", "lisbon", "san_francisco", "sao_paulo"]
SCHEMA = pa.schema([
    ("ride_id", pa.string()), ("city", pa.string()), ("rider", pa.string()), ("driver", pa.string()),
    ("fare", pa.float64()), ("event_ts", pa.int64()),
])


class RideSource:
    """A deterministic stream of ride events: new rides, fare updates, cancellations (deletes)."""

    def __init__(self, seed: int = 42) -> None:
        self.rng = random.Random(seed)
        self.next_id = 0
        self.live: dict[str, dict[str, Any]] = {}
        self.clock = 1_700_000_000_000

    def batch(self, rows: int) -> tuple[list[dict], list[dict]]:
        upserts: list[dict] = []
        deletes: list[dict] = []
        touched: set[str] = set()
        for _ in range(rows):
            self.clock += 1
            kind = self.rng.random()
            row: dict[str, Any]
            if kind < 0.7 or len(self.live) < 100:
                ride = f"ride-{self.next_id:08d}"
                self.next_id += 1
                row = {"ride_id": ride, "city": self.rng.choice(CITIES), "rider": f"rider-{self.rng.randrange(5000)}",
                       "driver": f"driver-{self.rng.randrange(800)}", "fare": round(self.rng.uniform(5, 80), 2),
                       "event_ts": self.clock}
            else:
                ride = self.rng.choice(list(self.live))
                if ride in touched:
                    continue
                row = dict(self.live[ride], event_ts=self.clock)
                if kind < 0.93:
                    row["fare"] = round(row["fare"] * self.rng.uniform(0.8, 1.3), 2)
                else:
                    deletes.append(row)
                    touched.add(ride)
                    del self.live[ride]
                    continue
            touched.add(ride)
            self.live[ride] = row
            upserts.append(row)
        upserts = [r for r in upserts if r["ride_id"] in self.live and self.live[r["ride_id"]] is r]
        return upserts, deletes


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--path", default="demo-output/rides")
    ap.add_argument("--batch-rows", type=int, default=20_000)
    args = ap.parse_args(argv)

    path = Path(args.path).resolve()
    shutil.rmtree(path, ignore_errors=True)
    table = HudiTable.create(str(path), table_name="rides", record_key="ride_id", ordering_field="event_ts",
                             partition_by="city", hive_style_partitioning=True, buckets=4)
    source = RideSource()
    print(f"streaming ride events into {path} for {args.seconds:.0f} s (MERGE_ON_READ, bucket index)")
    deadline = time.monotonic() + args.seconds
    batches = rows_in = 0
    latencies: list[float] = []
    while time.monotonic() < deadline:
        upserts, deletes = source.batch(args.batch_rows)
        start = time.perf_counter()
        table.write(pa.Table.from_pylist(upserts, schema=SCHEMA), operation="upsert")
        if deletes:
            table.write(pa.Table.from_pylist(deletes, schema=SCHEMA), operation="delete")
        latencies.append(time.perf_counter() - start)
        batches += 1
        rows_in += len(upserts) + len(deletes)
        print(f"  batch {batches:3d}: {len(upserts):6d} upserts {len(deletes):5d} deletes  "
              f"commit {latencies[-1] * 1000:6.0f} ms  live rides {len(source.live):8d}", flush=True)

    snapshot = table.to_arrow(columns=["ride_id", "fare", "event_ts"])
    ours = {r["ride_id"]: (r["fare"], r["event_ts"]) for r in snapshot.to_pylist()}
    expected = {k: (v["fare"], v["event_ts"]) for k, v in source.live.items()}
    ok = ours == expected and snapshot.num_rows == len(ours)
    print(f"\n{batches} batches, {rows_in:,} events, median commit {sorted(latencies)[len(latencies) // 2] * 1000:.0f} ms")
    print(f"table holds {snapshot.num_rows:,} rides; model holds {len(expected):,}: "
          + ("MATCH" if ok else "MISMATCH"))
    try:
        from hudi import HudiTableBuilder

        rs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(path)).build().read())
        same = rs.num_rows == snapshot.num_rows
        print(f"hudi-rs reads {rs.num_rows:,} rides: " + ("MATCH" if same else "MISMATCH"))
        ok = ok and same
    except ImportError:
        print("(install `hudi` to cross-check with hudi-rs)")
    by_city = table.to_polars(columns=["city", "fare"]).group_by("city").len().sort("city")
    print(by_city)
    print(f"\nthe table is at {path}; try:\n"
          f"  python -c \"import hudi_ds; print(hudi_ds.HudiTable('{path}').to_polars().head())\"\n"
          f"  python -c \"import hudi_ds; print(hudi_ds.HudiTable('{path}').timeline()[-3:])\"")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
