"""A test-only fault hook: fail a write after N data files, to prove failures leave nothing behind.

Set `HUDI_DS_FAIL_AFTER_FILES=N` in the environment (it reaches Spark's Python workers) or call
`fail_after(N)` in-process; with `HUDI_DS_FAIL_ONCE_DIR` also set, only the first failure in that folder
happens (Spark's retry of the task then succeeds). Never set in production.
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
        if _written <= budget:
            return
    once = os.environ.get("HUDI_DS_FAIL_ONCE_DIR")
    if once and not _first_visit(once, "injected_failure"):
        return
    raise InjectedFault(f"injected failure after {budget} data files")


def _first_visit(folder: str, name: str) -> bool:
    """True for the first caller in any process to reach `name` in `folder` (a file created exclusively)."""
    try:
        fd = os.open(os.path.join(folder, name), os.O_CREAT | os.O_EXCL | os.O_WRONLY)
    except FileExistsError:
        return False
    os.close(fd)
    return True


def pause_point(name: str) -> None:
    """Crash tests: when HUDI_DS_TEST_PAUSE_AT names this point, record that it was reached (a file named
    after it in HUDI_DS_TEST_PAUSE_DIR) and block, so the test can SIGKILL the process exactly here. Each
    point pauses once per pause folder, so the restarted job runs through."""
    points = os.environ.get("HUDI_DS_TEST_PAUSE_AT")
    folder = os.environ.get("HUDI_DS_TEST_PAUSE_DIR")
    if not points or not folder or name not in points.split(","):
        return
    if not _first_visit(folder, name):
        return
    while True:
        time.sleep(60)
