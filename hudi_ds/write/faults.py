"""A test-only fault hook: fail a write after N data files, to prove failures leave nothing behind.

Set `HUDI_DS_FAIL_AFTER_FILES=N` in the environment (it reaches Spark's Python workers) or call
`fail_after(N)` in-process. Never set in production.
"""

from __future__ import annotations

import os
import threading
import time

_lock = threading.Lock()
_budget: int | None = None
_written = 0


class InjectedFault(RuntimeError):
    """Raised by the fault hook; not a HudiDsError, like any unexpected crash."""


def fail_after(n: int | None) -> None:
    global _budget, _written
    with _lock:
        _budget, _written = n, 0


def file_written() -> None:
    global _written
    env = os.environ.get("HUDI_DS_FAIL_AFTER_FILES")
    budget = _budget if _budget is not None else (int(env) if env else None)
    if budget is None:
        return
    with _lock:
        _written += 1
        if _written > budget:
            raise InjectedFault(f"injected failure after {budget} data files")


def pause_point(name: str) -> None:
    """Crash tests: when HUDI_DS_TEST_PAUSE_AT names this point, record that it was reached (a file named
    after it in HUDI_DS_TEST_PAUSE_DIR) and block, so the test can SIGKILL the process exactly here. Each
    point pauses once per pause folder, so the restarted job runs through."""
    points = os.environ.get("HUDI_DS_TEST_PAUSE_AT")
    folder = os.environ.get("HUDI_DS_TEST_PAUSE_DIR")
    if not points or not folder or name not in points.split(","):
        return
    marker = os.path.join(folder, name)
    try:
        fd = os.open(marker, os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return
    os.close(fd)
    while True:
        time.sleep(60)
