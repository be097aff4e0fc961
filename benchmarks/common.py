"""Shared benchmark data, timing and memory: the (id, name, amount, ts, dt, flag) rows every benchmark uses,
and the peak resident memory (RSS) of this process and of the Python workers Spark starts for it."""

from __future__ import annotations

import os
import resource
import sys
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

PARTITIONS = [f"2024-01-0{d}" for d in range(1, 9)]


# Arrow's allocator (mimalloc) setting for transparent huge pages: benchmarks that time many steps in one process
# run with it off (docs/benchmarks.md, "Why bench_lakes' process read slower than a process of its own")
THP_SETTING = "MIMALLOC_ALLOW_THP"


def without_huge_pages(script: str, argv: list[str] | None) -> str:
    """Run the benchmark `script` again with Arrow's allocator not using transparent huge pages, unless the
    environment chose (mimalloc reads the setting when pyarrow loads, so it takes a new process): with them, a
    process's later steps spent up to half their time in the kernel zeroing 2 MiB pages for the arenas its earlier
    steps left, a cost of the benchmark's long process that deltalake's allocator does not pay. Returns the
    setting, for the header line."""
    if THP_SETTING not in os.environ:
        os.execve(sys.executable, [sys.executable, script, *(sys.argv[1:] if argv is None else argv)],
                  {**os.environ, THP_SETTING: "0"})
    return f"{THP_SETTING}={os.environ[THP_SETTING]}"


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


def lakes_data(n: int) -> tuple[pa.Table, pa.Table, pa.Table]:
    """The rows of bench_lakes (and its Paimon peer): the load, an upsert of 10% (half updates of random
    existing ids, half new ids) and a delete of 1% of the ids."""
    base = make_rows(np.arange(n, dtype=np.int64), ts=1)
    rng = np.random.default_rng(3)
    k = n // 10
    upd = rng.choice(n, size=k // 2, replace=False).astype(np.int64)
    upsert = make_rows(np.concatenate([upd, np.arange(n, n + k - k // 2, dtype=np.int64)]), ts=2, seed=1)
    del_ids = rng.choice(n, size=n // 100, replace=False).astype(np.int64)
    return base, upsert, make_rows(del_ids, ts=3, seed=2)


def timed_step(f: dict[str, float], name: str, fn: Callable[[], Any]) -> Any:
    """Time one step into `f` (`<name>_s`) with the growth of this process's peak RSS during it
    (`<name>_rss_growth_mib`); returns what the step returned."""
    mem: dict[str, float] = {}
    with step_memory(mem, name):
        seconds, out = timed(fn)
    f[f"{name}_s"] = seconds
    f[f"{name}_rss_growth_mib"] = mem[f"{name}_rss_growth_mib"]
    return out


def checksum(table: pa.Table) -> tuple[int, int, float]:
    """Row count, sum of ids and sum of amounts: a fast wrong answer cannot match."""
    return (table.num_rows, int(pc.sum(table["id"]).as_py() or 0), round(float(pc.sum(table["amount"]).as_py() or 0), 3))


def timed(fn: Callable[[], Any]) -> tuple[float, Any]:
    """Seconds `fn()` took, and its result."""
    start = time.perf_counter()
    out = fn()
    return time.perf_counter() - start, out


def best_of(n: int, fn: Callable[[], Any]) -> tuple[float, Any]:
    """The fastest of `n` calls, and the last result (the one before is freed first: a peak-memory figure
    around best_of covers one call)."""
    best, out = float("inf"), None
    for _ in range(n):
        out = None
        start = time.perf_counter()
        out = fn()
        best = min(best, time.perf_counter() - start)
    return best, out


# ---- memory (Linux /proc) ---------------------------------------------------------------------------------
# getrusage(RUSAGE_CHILDREN) in run.py only gives the largest process ever waited for, and pyspark's Python
# workers are children of Spark's JVM, not of the benchmark: each benchmark reports its own memory instead.

_lifetime_peak_kib = 0  # the largest high-water mark of this process read before a reset_peak_rss()


def _status(pid: int | str) -> dict[str, int]:
    """VmRSS (now) and VmHWM (peak so far) of a process in KiB; empty once it has exited."""
    out: dict[str, int] = {}
    try:
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    out[line[:5]] = int(line.split()[1])
    except (FileNotFoundError, ProcessLookupError):
        pass
    return out


def _children(pid: int) -> list[int]:
    """Child processes of `pid` (each thread lists the children it forked; the JVM forks from many)."""
    kids: list[int] = []
    try:
        for tid in os.listdir(f"/proc/{pid}/task"):
            with open(f"/proc/{pid}/task/{tid}/children") as f:
                kids += [int(k) for k in f.read().split()]
    except (FileNotFoundError, ProcessLookupError):
        pass
    return kids


def _cmdline(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as f:
            return f.read().replace(b"\0", b" ").decode(errors="replace")
    except (FileNotFoundError, ProcessLookupError):
        return ""


def reset_peak_rss() -> int:
    """Restart this process's high-water mark, so that the kernel measures the peak of what follows exactly
    (no sampling); the lifetime peak is kept for process_peak_rss_mib(). Returns the RSS now, in KiB."""
    global _lifetime_peak_kib
    now = _status("self")
    _lifetime_peak_kib = max(_lifetime_peak_kib, now["VmHWM"])
    with open("/proc/self/clear_refs", "w") as f:
        f.write("5")
    return now["VmRSS"]


def process_peak_rss_mib() -> float:
    """Peak RSS of this process over its whole life, in MiB (ru_maxrss, which a reset also lowers)."""
    return max(_lifetime_peak_kib, _status("self")["VmHWM"],
               resource.getrusage(resource.RUSAGE_SELF).ru_maxrss) / 1024


class SparkMemory:
    """Samples the RSS of the processes Spark started below this one, every `interval` s on a thread: its
    JVM and pyspark's Python workers (each `python -m pyspark.daemon ...` and the workers it forks). Only this
    process's descendants count, so other Spark sessions on the machine are left out. The workers' RSS is
    summed: pages a worker still shares with the daemon it was forked from count in both, so the sum is an
    upper bound of what they hold together (exact PSS costs milliseconds per process to read)."""

    def __init__(self, interval: float = 0.1) -> None:
        self.samples: list[tuple[float, int]] = []  # (monotonic time, RSS of all Python workers together, KiB)
        self.worker_hwm_kib = 0  # the largest high-water mark of any single worker
        self.jvm_hwm_kib = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._run, args=(interval,), daemon=True)

    def __enter__(self) -> SparkMemory:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        self._thread.join()

    def _run(self, interval: float) -> None:
        while not self._stop.wait(interval):
            self.sample()

    def sample(self) -> None:
        with self._lock:
            workers, todo = 0, _children(os.getpid())
            while todo:
                pid = todo.pop()
                todo += _children(pid)
                cmd, status = _cmdline(pid), _status(pid)
                if "pyspark.daemon" in cmd or "pyspark.worker" in cmd:
                    workers += status.get("VmRSS", 0)
                    self.worker_hwm_kib = max(self.worker_hwm_kib, status.get("VmHWM", 0))
                elif "SparkSubmit" in cmd:
                    self.jvm_hwm_kib = max(self.jvm_hwm_kib, status.get("VmHWM", 0))
            self.samples.append((time.monotonic(), workers))

    def workers_peak_mib(self, start: float = 0.0, end: float = float("inf")) -> float:
        """The largest combined RSS of the Python workers sampled between `start` and `end` (monotonic)."""
        with self._lock:
            return max((kib for t, kib in self.samples if start <= t <= end), default=0) / 1024


@contextmanager
def step_memory(figures: dict[str, float], step: str, spark: SparkMemory | None = None) -> Iterator[None]:
    """Memory of one step, in MiB: `{step}_rss_mib` is this process's peak RSS during the step (the kernel's
    high-water mark, reset at the start: exact), `{step}_rss_growth_mib` that peak less the RSS at the start
    (what the step needed beyond the data already in memory); with `spark`, `{step}_workers_rss_mib` is the
    peak combined RSS of the pyspark Python workers during the step (sampled)."""
    before = reset_peak_rss()
    start = time.monotonic()
    if spark is not None:
        spark.sample()
    yield
    if spark is not None:
        spark.sample()
        figures[f"{step}_workers_rss_mib"] = spark.workers_peak_mib(start, time.monotonic())
    global _lifetime_peak_kib
    peak = _status("self")["VmHWM"]
    _lifetime_peak_kib = max(_lifetime_peak_kib, peak)
    figures[f"{step}_rss_mib"] = peak / 1024
    figures[f"{step}_rss_growth_mib"] = (peak - before) / 1024


def memory_figures(spark: SparkMemory | None = None) -> dict[str, float]:
    """Whole-run memory, in MiB: `peak_rss_mib` of the benchmark process; with `spark`, `workers_peak_rss_mib`
    (pyspark's Python workers together, sampled), `worker_max_rss_mib` (the largest single worker's kernel
    high-water mark) and `jvm_peak_rss_mib`."""
    out = {"peak_rss_mib": process_peak_rss_mib()}
    if spark is not None:
        spark.sample()
        out.update(workers_peak_rss_mib=spark.workers_peak_mib(), worker_max_rss_mib=spark.worker_hwm_kib / 1024,
                   jvm_peak_rss_mib=spark.jvm_hwm_kib / 1024)
    return out
