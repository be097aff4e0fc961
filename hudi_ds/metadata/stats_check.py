"""Checking the metadata table's column_stats and partition_stats against the base files (`hudi-py validate`):
every live parquet base file has column_stats entries, no entry names a file that is not committed, an entry's
min, max, null and value counts are what the file's footer says, and each partition's partition_stats range
covers the ranges of its live base files. Bounds are compared only where both sides carry the same wrapper and a
value whose order Python and Java agree on (numbers, booleans, decimals' unscaled bytes, strings below U+D800).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from hudi_ds.files.view import FileSystemView
from hudi_ds.metadata import records as md
from hudi_ds.metadata.column_stats import read_stats
from hudi_ds.metadata.column_stats_sync import (
    base_file_ranges,
    file_records,
    indexed_columns,
    is_parquet_base,
    ranges_schema,
)
from hudi_ds.metadata.layout import MetadataTable, listed_partitions
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline


def _comparable(wrapped: md.WrappedValue | None) -> Any:
    """A bound as a value Python orders as Java does, None when it has none."""
    if wrapped is None or wrapped.value is None:
        return None
    v = wrapped.value
    if isinstance(v, bytes):
        return int.from_bytes(v, "big", signed=True) if wrapped.wrapper == "BytesWrapper" else None
    if isinstance(v, str):
        return v if all(c < "\ud800" for c in v) else None
    return v if isinstance(v, (int, float)) else None


def _footer_stats(storage: Storage, partition: str, name: str, version: int) -> dict[str, md.ColumnStats]:
    ranges = base_file_ranges(storage, partition, name)
    records = file_records(partition, name, ranges, indexed_columns(ranges_schema(ranges)), version)
    return {s.column_name: s for s in map(md.column_stats, records.values()) if s.column_name is not None}


def _differences(where: str, entry: md.ColumnStats, footer: md.ColumnStats) -> list[str]:
    out = []
    for what, mine, theirs in (("value count", entry.value_count, footer.value_count),
                               ("null count", entry.null_count, footer.null_count)):
        if mine != theirs:
            out.append(f"{where}: column_stats has {what} {mine}, the file's footer {theirs}")
    for what, mine_w, theirs_w in (("min", entry.min_value, footer.min_value),
                                   ("max", entry.max_value, footer.max_value)):
        if mine_w is not None and theirs_w is not None and mine_w.wrapper != theirs_w.wrapper:
            continue  # another encoding of the bound (Hudi 1.0's wrappers): not comparable
        mine, theirs = _comparable(mine_w), _comparable(theirs_w)
        if (mine_w is None) != (theirs_w is None) or (mine is not None and theirs is not None and mine != theirs):
            out.append(f"{where}: column_stats has {what} {None if mine_w is None else mine_w.value!r}, the "
                       f"file's footer {None if theirs_w is None else theirs_w.value!r}")
    return out


def _covers(partition: str, column: str, entry: md.ColumnStats, file_name: str,
            footer: md.ColumnStats) -> list[str]:
    low, high = _comparable(entry.min_value), _comparable(entry.max_value)
    f_low, f_high = _comparable(footer.min_value), _comparable(footer.max_value)
    out = []
    try:
        if low is not None and f_low is not None and f_low < low:
            out.append(f"partition_stats of {partition!r} column {column!r}: min {low!r} is above {f_low!r} in "
                       f"{file_name}")
        if high is not None and f_high is not None and f_high > high:
            out.append(f"partition_stats of {partition!r} column {column!r}: max {high!r} is below {f_high!r} in "
                       f"{file_name}")
    except TypeError:
        return []  # bounds of different types (a promoted column): not comparable
    return out


def statistics_differences(storage: Storage, mdt: MetadataTable, timeline: Timeline, view: FileSystemView,
                           committed: Mapping[str, Mapping[str, int]],
                           version: int) -> tuple[list[str], list[str], int]:
    """Every difference between the table's column_stats / partition_stats and its base files: errors, warnings
    (a live base file without column_stats entries, which readers then read: Apache Hudi leaves some out too) and
    the number of live base files checked."""
    listed = listed_partitions(storage)
    if md.COLUMN_STATS not in listed and md.PARTITION_STATS not in listed:
        return [], [], 0
    errors: list[str] = []
    warnings: list[str] = []
    file_stats = read_stats(mdt, md.COLUMN_STATS, timeline) if md.COLUMN_STATS in listed else {}
    partition_stats = read_stats(mdt, md.PARTITION_STATS, timeline) if md.PARTITION_STATS in listed else {}
    names = {name for files in committed.values() for name in files}
    for name in sorted(set(file_stats) - names):
        errors.append(f"column_stats has entries for {name}, which is not a committed file")
    partitions = {md.partition_key(p) for p, files in committed.items() if files}
    for partition in sorted(set(partition_stats) - partitions):
        errors.append(f"partition_stats has entries for partition {partition!r}, which holds no committed file")
    checked = 0
    for sl in view.latest_slices():
        partition = sl.partition
        if sl.base_file is None or not is_parquet_base(partition, sl.base_file.name):
            continue
        name = sl.base_file.name
        footer = _footer_stats(storage, partition, name, version)
        checked += 1
        if md.COLUMN_STATS in listed:
            entries = file_stats.get(name)
            if not entries:
                warnings.append(f"column_stats has no entries for the live base file {partition}/{name}: "
                                "readers cannot skip it")
            for column, entry in sorted((entries or {}).items()):
                if column in footer:
                    errors += _differences(f"{partition}/{name} column {column!r}", entry, footer[column])
        if md.PARTITION_STATS in listed:
            by_column = partition_stats.get(md.partition_key(partition))
            if not by_column:
                errors.append(f"partition_stats has no entries for partition {partition!r}")
            for column, entry in sorted((by_column or {}).items()):
                if column in footer:
                    errors += _covers(partition, column, entry, name, footer[column])
    return errors, warnings, checked
