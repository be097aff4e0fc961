"""Writes whose writer saw them fail: rolled back at once, and when the store refuses the rollback too, before
any later write of this process begins, not only once their heartbeat has expired.

A failed instant's files must be gone before a later commit completes (hudi-rs reads every file of a version-6
table up to the latest completed instant). A crashed writer's instant waits for its heartbeat to expire; a writer
that is still alive knows better: it stops the heartbeat (every writer then takes the instant for crashed and
rolls it back first) and remembers the instant, so that its own next write rolls it back even when the store
refused to stop the heartbeat as well.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator

from hudi_ds.config import TableConfig
from hudi_ds.recovery.heartbeat import stop_heartbeat
from hudi_ds.recovery.rollback import rollback_failed_writes
from hudi_ds.storage import Storage

_lock = threading.Lock()
_left_behind: dict[str, set[str]] = {}  # table URI -> instants this process failed to roll back


@contextlib.contextmanager
def rolling_back(storage: Storage, instant: str) -> Iterator[None]:
    """Around the rollback of a failed write: if the rollback fails, the instant is handed on (heartbeat stopped
    where the store allows, remembered for this process's next write) and the rollback's error raised."""
    try:
        yield
    except Exception:
        with _lock:
            _left_behind.setdefault(storage.uri, set()).add(instant)
        with contextlib.suppress(Exception):
            stop_heartbeat(storage, instant)
        raise


def roll_back_left_behind(storage: Storage, config: TableConfig) -> None:
    """Roll back the failed writes this process could not roll back when they failed (whatever their heartbeat
    says); a store error propagates, so no later write begins over their files."""
    with _lock:
        instants = sorted(_left_behind.get(storage.uri, ()))
    if not instants:
        return
    rollback_failed_writes(storage, config, only=instants)
    with _lock:
        _left_behind[storage.uri] -= set(instants)


def left_behind_note(instant: str, error: BaseException) -> str:
    """What a user whose write failed needs to know when its rollback failed too."""
    return (f"rolling back the failed instant {instant} failed as well ({error}); it is rolled back before this "
            "process's next write of the table begins, and by any other writer once its heartbeat is gone "
            "(hoodie.client.heartbeat.timeout.secs), or now with HudiTable.rollback(instant, force=True)")


__all__ = ["left_behind_note", "roll_back_left_behind", "rolling_back"]
