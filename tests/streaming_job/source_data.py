"""A deterministic keyed change stream for streaming tests: batch files of inserts, updates and deletes,
and the dict model of the table they produce."""

from __future__ import annotations

import os
import random
from collections import deque
from collections.abc import Iterator
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

SCHEMA = pa.schema([("id", pa.string()), ("region", pa.string()), ("ts", pa.int64()), ("amount", pa.float64()),
                    ("op", pa.string())])


def batches(n_batches: int, rows: int, keys: int = 500, seed: int = 7) -> list[list[dict]]:
    """Each batch: rows with distinct ids; 'u' upserts with increasing ts, 'd' deletes of live keys."""
    rng = random.Random(seed)
    live: set[str] = set()
    out = []
    ts = 0
    for _ in range(n_batches):
        batch, used = [], set()
        for _ in range(rows):
            key = f"k{rng.randrange(keys):05d}"
            if key in used:
                continue
            used.add(key)
            ts += 1
            region = ["eu", "us", "apac"][int(key[1:]) % 3]
            if key in live and rng.random() < 0.15:
                batch.append({"id": key, "region": region, "ts": ts, "amount": None, "op": "d"})
                live.discard(key)
            else:
                batch.append({"id": key, "region": region, "ts": ts, "amount": round(rng.random() * 100, 2),
                              "op": "u"})
                live.add(key)
        out.append(batch)
    return out


def states(all_batches: list[list[dict]]) -> Iterator[dict[str, tuple[int, float]]]:
    """The table after each batch (one dict, updated in place between yields)."""
    state: dict[str, tuple[int, float]] = {}
    for batch in all_batches:
        for r in batch:
            if r["op"] == "d":
                state.pop(r["id"], None)
            else:
                state[r["id"]] = (r["ts"], r["amount"])
        yield state


def model(all_batches: list[list[dict]]) -> dict[str, tuple[int, float]]:
    last = deque(states(all_batches), maxlen=1)
    return last[0] if last else {}


def write_files(folder: Path, all_batches: list[list[dict]]) -> None:
    """One parquet file per batch, modification times strictly increasing (the file source's order)."""
    folder.mkdir(parents=True, exist_ok=True)
    base = 1_700_000_000
    for i, batch in enumerate(all_batches):
        path = folder / f"batch-{i:05d}.parquet"
        pq.write_table(pa.Table.from_pylist(batch, schema=SCHEMA), path)
        os.utime(path, (base + i, base + i))
