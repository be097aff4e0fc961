"""Read splits: a file slice, or a bounded part of one, so that no single task reads an unbounded slice.

A slice whose base file is larger than the bounds is cut at row-group boundaries. When the slice also has
log files to merge, each part merges the logs into its own base rows only, and one extra log-only part
emits the log records whose keys are in no base row: together exactly the slice's merged rows, each once.
Small slices share a task, the tasks balanced by size (a Python task costs tens of milliseconds).
"""

from __future__ import annotations

import heapq
from dataclasses import dataclass

from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.view import FileSlice
from hudi_ds.storage import Storage

# a Hudi row (five meta columns included) takes more than this in parquet; smaller files need no footer read
_MIN_ROW_BYTES = 4


@dataclass(frozen=True)
class SlicePart:
    """The whole slice (row_groups None), a row-group range of its base file, or its log-only records."""

    file_slice: FileSlice
    row_groups: tuple[int, ...] | None = None
    log_only: bool = False
    size: int = 0  # bytes on storage (an estimate for row-group ranges)

    def __repr__(self) -> str:
        extra = f" row_groups={list(self.row_groups)}" if self.row_groups is not None else ""
        return f"{self.file_slice.partition}/{self.file_slice.file_id}{extra}{' log-only' if self.log_only else ''}"


def split_slice(storage: Storage, sl: FileSlice, include_logs: bool, max_bytes: int, max_rows: int,
                can_split_merges: bool = True) -> list[SlicePart]:
    """The parts of one slice, each at most `max_bytes` and `max_rows` (a single row group may exceed them)."""
    merges = include_logs and bool(sl.log_files)
    base_size = sl.base_file.size if sl.base_file else 0
    whole = [SlicePart(sl, None, False, sl.size if include_logs else base_size)]
    if sl.base_file is None or (merges and not can_split_merges):
        return whole
    if base_size <= max_bytes and base_size <= max_rows * _MIN_ROW_BYTES:
        return whole  # cannot exceed either bound: no footer to read
    with open_base_file(storage, sl.base_file.path) as pf:
        meta = pf.metadata
    if base_size <= max_bytes and meta.num_rows <= max_rows:
        return whole
    raw = [meta.row_group(i).total_byte_size for i in range(meta.num_row_groups)]
    scale = base_size / max(1, sum(raw))  # row-group sizes are uncompressed
    parts: list[SlicePart] = []
    current: list[int] = []
    size = rows = 0
    for i, rg_bytes in enumerate(raw):
        rg_size, rg_rows = int(rg_bytes * scale), meta.row_group(i).num_rows
        if current and (size + rg_size > max_bytes or rows + rg_rows > max_rows):
            parts.append(SlicePart(sl, tuple(current), False, size))
            current, size, rows = [], 0, 0
        current.append(i)
        size += rg_size
        rows += rg_rows
    if current:
        parts.append(SlicePart(sl, tuple(current), False, size))
    if len(parts) <= 1:
        return whole
    if merges:
        log_size = sum(lf.size for lf in sl.log_files)
        parts = [SlicePart(sl, p.row_groups, False, p.size + log_size) for p in parts]
        parts.append(SlicePart(sl, None, True, log_size))
    return parts


def pack(parts: list[SlicePart], max_bytes: int, open_cost: int, min_partitions: int) -> list[list[SlicePart]]:
    """Parts grouped into tasks of about equal size: as many tasks as the parallelism asks, more when that would
    put over `max_bytes` in one; the largest part first, each into the task holding the least so far. (Spark
    packs files next-fit by a target size, which with few tasks leaves one holding far more than another: the
    read waits for the fullest task.)"""
    if not parts:
        return []
    total = sum(p.size + open_cost for p in parts)
    tasks = min(len(parts), max(1, min_partitions, -(-total // max(1, max_bytes))))
    bins: list[list[SlicePart]] = [[] for _ in range(tasks)]
    loads = [(0, i) for i in range(tasks)]  # a heap of (bytes, task)
    for p in sorted(parts, key=lambda p: -p.size):
        load, i = heapq.heappop(loads)
        bins[i].append(p)
        heapq.heappush(loads, (load + p.size + open_cost, i))
    return bins
