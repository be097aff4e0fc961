"""The main job: Spark streams synthetic ride events (new rides, fare updates, cancellations) into a
partitioned MERGE_ON_READ table with compaction and cleaning on, while a second streaming query reads the
table's change feed. It prints live progress, checks the final table against its own model (and against
hudi-rs when installed), and shows where the table is and what to try next.

    ./run demo [--seconds 30] [--path demo-output/rides]
"""

from __future__ import annotations

import argparse
import os
import random
import shutil
import threading
import time
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

CITIES = ["amsterdam", "berlin", "chennai", "lisbon", "san_francisco", "sao_paulo"]
SCHEMA = pa.schema([
    ("ride_id", pa.string()), ("city", pa.string()), ("rider", pa.string()), ("driver", pa.string()),
    ("fare", pa.float64()), ("event_ts", pa.int64()), ("op", pa.string()),
])


class RideSource:
    """A deterministic stream of ride events; `live` is the model of what the table must hold."""

    def __init__(self, seed: int = 42) -> None:
        self.rng = random.Random(seed)
        self.next_id = 0
        self.live: dict[str, dict[str, Any]] = {}
        self.clock = 1_700_000_000_000

    def batch(self, rows: int) -> list[dict[str, Any]]:
        out: dict[str, dict[str, Any]] = {}
        for _ in range(rows):
            self.clock += 1
            kind = self.rng.random()
            row: dict[str, Any]
            if kind < 0.7 or len(self.live) < 100:
                ride = f"ride-{self.next_id:08d}"
                self.next_id += 1
                row = {"ride_id": ride, "city": self.rng.choice(CITIES), "rider": f"rider-{self.rng.randrange(5000)}",
                       "driver": f"driver-{self.rng.randrange(800)}", "fare": round(self.rng.uniform(5, 80), 2),
                       "event_ts": self.clock, "op": "c"}
            else:
                ride = self.rng.choice(list(self.live))
                if ride in out:
                    continue
                row = dict(self.live[ride], event_ts=self.clock)
                if kind < 0.93:
                    row.update(fare=round(row["fare"] * self.rng.uniform(0.8, 1.3), 2), op="u")
                else:
                    row["op"] = "d"
            out[ride] = row
            if row["op"] == "d":
                self.live.pop(ride, None)
            else:
                self.live[ride] = {k: v for k, v in row.items() if k != "op"}
        return list(out.values())


def _produce(folder: Path, source: RideSource, stop: threading.Event, rows: int, every_s: float) -> None:
    """Drop one parquet file of events into the source folder every `every_s` seconds."""
    n = 0
    while not stop.is_set():
        path = folder / f"events-{n:06d}.parquet"
        tmp = folder / f".events-{n:06d}.tmp"
        pq.write_table(pa.Table.from_pylist(source.batch(rows), schema=SCHEMA), tmp)
        os.utime(tmp, (1_700_000_000 + n, 1_700_000_000 + n))
        tmp.rename(path)
        n += 1
        stop.wait(every_s)


def _start_sink(spark: Any, events_dir: Path, work: Path, root: Path) -> Any:
    """The streaming upsert of ride events into the Hudi table (one commit per micro-batch)."""
    events = spark.readStream.schema(spark.read.parquet(str(events_dir)).schema).option(
        "maxFilesPerTrigger", 4).parquet(str(events_dir))
    # all events of one ride in a micro-batch must reach one task (the sink cannot shuffle): hash by key
    return (events.repartition(2, "ride_id").writeStream.format("hudi-py")
            .option("hoodie.table.name", "rides")
            .option("hoodie.datasource.write.recordkey.field", "ride_id")
            .option("hoodie.datasource.write.precombine.field", "event_ts")
            .option("hoodie.datasource.write.partitionpath.field", "city")
            .option("hoodie.datasource.write.hive_style_partitioning", "true")
            .option("hoodie.datasource.write.changelog.column", "op")
            .option("compaction.delta_commits", "4")
            .option("clean.retain_commits", "6")
            .option("checkpointLocation", str(work / "ck-sink"))
            .trigger(processingTime="1 second").start(str(root)))


def _start_feed(spark: Any, sink: Any, work: Path, root: Path) -> Any:
    """The change feed of the table into a memory table, once a commit has recorded the table's columns."""
    from hudi_ds import HudiTable

    while not (root / ".hoodie" / "hoodie.properties").exists() or not HudiTable(str(root)).schema.names:
        if sink.exception() is not None:
            raise RuntimeError(sink.exception())
        time.sleep(0.2)
    return (spark.readStream.format("hudi-py").option("hoodie.datasource.query.incremental.format", "cdc")
            .load(str(root)).writeStream.format("memory").queryName("ride_changes")
            .option("checkpointLocation", str(work / "ck-feed")).trigger(processingTime="2 seconds").start())


def _show_progress(spark: Any, sink: Any, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    shown = 0
    while time.monotonic() < deadline:
        time.sleep(1)
        progress = [p for p in sink.recentProgress if p.get("numInputRows", 0) > 0]
        for p in progress[shown:]:
            changes = spark.sql("select count(*) from ride_changes").first()[0]
            print(f"  batch {p['batchId']:3d}: {p['numInputRows']:6d} events  "
                  f"{p['durationMs'].get('addBatch', 0):5d} ms  change feed rows so far {changes:7d}", flush=True)
        shown = len(progress)


def _report(spark: Any, root: Path, source: RideSource) -> bool:
    """Print what happened and check the table against the model and hudi-rs; True when all agree."""
    from hudi_ds import HudiTable

    table = HudiTable(str(root))
    snapshot = table.to_arrow(columns=["ride_id", "fare", "event_ts"])
    ours = {r["ride_id"]: (r["fare"], r["event_ts"]) for r in snapshot.to_pylist()}
    expected = {k: (v["fare"], v["event_ts"]) for k, v in source.live.items()}
    ok = ours == expected and snapshot.num_rows == len(ours)
    kinds = {r[0]: r[1] for r in spark.sql(
        "select _change_type, count(*) from ride_changes group by _change_type").collect()}
    timeline = table.timeline()
    print(f"\n{sum(1 for i in timeline if i.action == 'deltacommit')} delta commits, "
          f"{sum(1 for i in timeline if i.action == 'commit')} compactions, "
          f"{sum(1 for i in timeline if i.action == 'clean')} cleans")
    print(f"change feed: {dict(sorted(kinds.items()))}")
    print(f"table holds {snapshot.num_rows:,} rides; the model holds {len(expected):,}: "
          + ("MATCH" if ok else "MISMATCH"))
    try:
        from hudi import HudiTableBuilder

        rs = pa.Table.from_batches(HudiTableBuilder.from_base_uri(str(root)).build().read())
        same = rs.num_rows == snapshot.num_rows
        print(f"hudi-rs (an independent reader) reads {rs.num_rows:,} rides: " + ("MATCH" if same else "MISMATCH"))
        ok = ok and same
    except ImportError:
        print("(pip install hudi to cross-check with hudi-rs)")
    return ok


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--seconds", type=float, default=30.0)
    ap.add_argument("--path", default="demo-output/rides")
    ap.add_argument("--rows-per-file", type=int, default=5_000)
    args = ap.parse_args(argv)

    from hudi_ds.spark import session

    root = Path(args.path).resolve()
    work = root.parent / (root.name + "-work")
    shutil.rmtree(work, ignore_errors=True)
    shutil.rmtree(root, ignore_errors=True)
    (work / "events").mkdir(parents=True)
    print("starting Spark (local[2])...", flush=True)
    spark = session(**{"spark.sql.shuffle.partitions": "2"})
    source = RideSource()
    stop = threading.Event()
    first = source.batch(args.rows_per_file)
    pq.write_table(pa.Table.from_pylist(first, schema=SCHEMA), work / "events" / "events-init.parquet")
    os.utime(work / "events" / "events-init.parquet", (1_699_999_999, 1_699_999_999))
    producer = threading.Thread(target=_produce, args=(work / "events", source, stop, args.rows_per_file, 1.0),
                                daemon=True)
    sink = _start_sink(spark, work / "events", work, root)
    feed = _start_feed(spark, sink, work, root)
    producer.start()
    print(f"streaming ride events into {root} for {args.seconds:.0f} s "
          "(MERGE_ON_READ, bucket index, compaction every 4 commits, cleaning on)", flush=True)
    _show_progress(spark, sink, args.seconds)
    stop.set()
    producer.join()
    sink.processAllAvailable()
    feed.processAllAvailable()
    sink.stop()
    feed.stop()
    ok = _report(spark, root, source)
    spark.stop()
    print(f"\nthe table is at {root}; try:\n"
          f"  hudi-py info {root}\n  hudi-py timeline {root}\n  hudi-py files {root}\n"
          f"  hudi-py show {root} --where \"city = lisbon\" --limit 5\n  hudi-py validate {root}")
    return 0 if ok else 1


if __name__ == "__main__":
    raise SystemExit(main())
