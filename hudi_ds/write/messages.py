"""What a write task reports to the coordinator: small, frozen, picklable."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from hudi_ds.metadata.column_ranges import FileRanges


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
    column_ranges: FileRanges | None = None  # a base file's, from the footer written (column_stats takes them)


@dataclass(frozen=True)
class DeferredRows:
    """A task's rows for a copy-on-write file group whose new base file another task of the write claimed.

    Two tasks must not both rewrite one base file, so the later one stages its rows (records with meta columns,
    and the keys it deletes) as Arrow IPC files in the instant's temp folder for the coordinator to merge."""

    partition: str
    file_id: str
    bucket: int
    rows_path: str | None  # relative to the table base path
    deletes_path: str | None


@dataclass(frozen=True)
class GroupKeys:
    """Keys of one file group with their ordering values, that another task of the same write may also hold a
    version of (see hudi_ds.write.cross_task and hudi_ds.write.shared_groups): the keys a task deleted, or (copy-on-
    write) the keys whose row it dropped because the base file's row outranks it."""

    partition: str
    file_id: str
    table: pa.Table  # the record key column, and the ordering field's when the table has one


@dataclass(frozen=True)
class ChangeDataFile:
    """The change data a task wrote for a file group it rewrote alone (hudi_ds.write.change_data)."""

    partition: str
    file_id: str
    path: str  # relative to the table base path
    size: int


@dataclass(frozen=True)
class TaskResult:
    """One message per task, empty tasks included (Spark calls write() for every partition)."""

    task_id: int
    files: tuple[WrittenFile, ...] = ()
    partitions: tuple[str, ...] = ()
    deferred: tuple[DeferredRows, ...] = ()
    deletes: tuple[GroupKeys, ...] = ()  # writes that also write rows (a changelog)
    outranked: tuple[GroupKeys, ...] = ()  # copy-on-write: rows the base file's row beat
    change_data: tuple[ChangeDataFile, ...] = ()  # copy-on-write rewrites, with hoodie.table.cdc.enabled
    inserted: tuple[GroupKeys, ...] = ()  # lookup indexes: the new keys placed, per partition (file id "")
    # copy-on-write with virtual keys: the keys a task wrote into the base file it rewrote, whose rows carry no
    # commit time to tell them from the old base's
    rewritten: tuple[GroupKeys, ...] = ()
