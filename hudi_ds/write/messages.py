"""What a write task reports to the coordinator: small, frozen, picklable."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class WrittenFile:
    partition: str
    file_id: str
    bucket: int
    path: str  # relative to the table base path
    is_log: bool
    prev_commit: str  # "null" for a new file group, else the instant of the slice it extends or rewrites
    base_file: str  # base file name of the slice ("" for a log-only slice); base files name themselves
    log_version: int
    num_writes: int
    num_inserts: int
    num_updates: int
    num_deletes: int
    size: int
    log_blocks: int = 0


@dataclass(frozen=True)
class TaskResult:
    """One message per task, empty tasks included (Spark calls write() for every partition)."""

    task_id: int
    files: tuple[WrittenFile, ...] = ()
    partitions: tuple[str, ...] = ()
    # COW rows that reached a bucket whose new base file another task of this write owns:
    # spilled to these temp files, merged into that base file by the coordinator.
    deferred: tuple[tuple[str, int, str], ...] = ()
