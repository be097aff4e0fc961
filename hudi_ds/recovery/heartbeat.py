"""Heartbeats: a writer's sign of life while its instant is pending.

A writer touches `.hoodie/.heartbeat/<instant>` when it claims an instant and while it works; other writers
roll back a pending instant only when its heartbeat is older than the timeout (Apache Hudi's rule).
"""

from __future__ import annotations

import time

from hudi_ds.storage import Storage
from hudi_ds.storage.layout import heartbeat_path

DEFAULT_HEARTBEAT_TIMEOUT_S = 300.0


def touch_heartbeat(storage: Storage, instant: str) -> None:
    storage.write_bytes(heartbeat_path(instant), str(time.time()).encode())


def heartbeat_age(storage: Storage, instant: str) -> float | None:
    """Seconds since the instant's writer last beat; None when it has no (readable) heartbeat."""
    try:
        return time.time() - float(storage.read_bytes(heartbeat_path(instant)).decode() or 0)
    except (FileNotFoundError, ValueError):
        return None


def stop_heartbeat(storage: Storage, instant: str) -> None:
    storage.delete(heartbeat_path(instant))
