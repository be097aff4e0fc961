"""Shared benchmark data and timing: the (id, name, amount, ts, dt, flag) rows every benchmark uses."""

from __future__ import annotations

import time
from collections.abc import Callable
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

PARTITIONS = [f"2024-01-0{d}" for d in range(1, 9)]


def make_rows(ids: np.ndarray, ts: int, seed: int = 0) -> pa.Table:
    rng = np.random.default_rng(seed)
    n = len(ids)
    names = pa.array(np.char.add("name-", ids.astype(str)))
    return pa.table({
        "id": pa.array(ids, pa.int64()),
        "name": names,
        "amount": pa.array(rng.random(n) * 1000.0),
        "ts": pa.array(np.full(n, ts, dtype=np.int64)),
        "dt": pa.array(np.array(PARTITIONS, dtype=object)[ids % len(PARTITIONS)], pa.string()),
        "flag": pa.array((ids % 3).astype(np.int32)),
    })


def checksum(table: pa.Table) -> tuple[int, int, float]:
    """Row count, sum of ids and sum of amounts: a fast wrong answer cannot match."""
    return (table.num_rows, int(pc.sum(table["id"]).as_py() or 0), round(float(pc.sum(table["amount"]).as_py() or 0), 3))


@contextmanager
def timed(results: dict[str, float], name: str) -> Any:
    start = time.perf_counter()
    yield
    results[name] = time.perf_counter() - start


def best_of(n: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    best, out = float("inf"), None
    for _ in range(n):
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out
