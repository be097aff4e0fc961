"""Work that reads a table while other writers move its timeline on."""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

from hudi_ds.errors import MissingFileError
from hudi_ds.timeline.timeline import Timeline

ATTEMPTS = 3  # plans of one piece of work when writers keep moving the timeline under it
T = TypeVar("T")


def on_latest_timeline(load: Callable[[], Timeline], run: Callable[[Timeline], T]) -> T:
    """`run` on a fresh timeline. A file missing because writers moved on while it ran (a clean removed a slice
    that a compaction newer than the timeline replaced; an instant was archived) runs again on the new timeline;
    a file missing from an unchanged timeline is lost, and the MissingFileError goes to the caller."""
    timeline = load()
    for _ in range(ATTEMPTS - 1):
        try:
            return run(timeline)
        except MissingFileError:
            fresh = load()
            if fresh.instants == timeline.instants:
                raise
            timeline = fresh
    return run(timeline)
