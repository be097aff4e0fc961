"""Executing one compaction operation: read the planned slice, merge it, write the new base file.

Split from `compaction` (scheduling and the run loop). Everything here works on one file group; the caller
runs operations in parallel and publishes the commit.
"""

from __future__ import annotations

import json
import time
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ds import faults
from hudi_ds.errors import CorruptTableError
from hudi_ds.files.base_file import write_base_file
from hudi_ds.files.compaction_plan import CompactionOperation
from hudi_ds.files.encoding import dictionary_columns
from hudi_ds.files.naming import base_file_name, join, parse_log_file
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.log.format import BlockType, read_blocks
from hudi_ds.merge import merge_slice_counted
from hudi_ds.metadata.column_stats_sync import file_ranges
from hudi_ds.read.schema_resolver import ARROW_SCHEMA_KEY
from hudi_ds.read.slice_reader import SliceReader
from hudi_ds.schema.avro import arrow_to_avro
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline, WriteStat


@dataclass(frozen=True)
class SliceInputs:
    """What one operation read: enough to notice, before publishing, that its slice changed."""

    key: tuple[str, str]
    base_instant: str
    logs: frozenset[tuple[str, int]]
    unseen_instants: frozenset[str]  # block instants skipped as not committed when read


@dataclass(frozen=True)
class ExecOptions:
    row_group_rows: int | None
    row_group_bytes: int
    compression: str
    bloom_filters: bool = False  # base files carry Hudi's bloom filter footer (hudi_ds.index.choice)


def input_slice(view: FileSystemView, op: CompactionOperation) -> FileSlice | None:
    """The planned slice as it is now: its base file and every log file before C (the logs of C's own,
    new slice are not compacted)."""
    slices = view.groups.get(op.key)
    if slices is None:
        return None  # the file group was replaced (insert overwrite) since the plan was made
    vis = view.visibility
    for sl in slices:
        if (sl.base_instant or (sl.log_files[0].instant if sl.log_files else "")) == op.base_instant:
            logs = [lf for lf in sl.log_files if vis.slice_time(lf.instant) < op.instant]
            return FileSlice(sl.partition, sl.file_id, sl.base_instant, sl.base_file, logs)
    raise CorruptTableError(
        f"compaction {op.instant}: the file slice {op.base_instant} of file group {op.file_id} "
        f"(partition {op.partition!r}) it plans to compact is missing; restore it or roll the table back")


def _block_stats(storage: Storage, sl: FileSlice, vis: Visibility) -> tuple[int, int, int, set[str]]:
    """(blocks, rollback blocks, corrupt blocks, block instants not visible) of the slice's logs."""
    blocks = rollbacks = corrupt = 0
    unseen: set[str] = set()
    for lf in sl.log_files:
        for block in read_blocks(storage.read_bytes(lf.path), lf.path):
            blocks += 1
            rollbacks += block.block_type == BlockType.COMMAND
            corrupt += block.block_type == BlockType.CORRUPT
            if block.instant_time and not vis.sees(block.instant_time):
                unseen.add(block.instant_time)
    return blocks, rollbacks, corrupt, unseen


def _write_base(storage: Storage, instant: str, partition: str, name: str, records: pa.Table,
                avro: dict[str, Any], options: ExecOptions, merge: bool) -> tuple[int, pq.FileMetaData]:
    """One base file, rolled into row groups of the target size; returns its size and footer."""
    rows = options.row_group_rows
    if rows is None:
        n = records.num_rows
        rows = max(1, options.row_group_bytes * n // max(1, records.nbytes)) if n else 1
    written = write_base_file(storage, instant, partition, name, records, avro, compression=options.compression,
                              dictionary=dictionary_columns(records), merge=merge, row_group_rows=rows,
                              bloom_filter=options.bloom_filters)
    faults.pause_point("compaction_file_written")
    return written


def _in_key_order(base: pa.Table | None, key: str) -> bool:
    """Whether the base file's rows rise by key. Only then does the merge write updated rows where their base
    rows were, as Hudi's merge handle does (the file stays in key order and compresses 1-2% better): the
    reordering copies every merged row once more, a fifth of a streaming compaction's CPU, and a file out of key
    order gains nothing by it (the same bytes within 0.1%, docs/benchmarks.md). Else the base rows that stay come
    first, then the log rows."""
    if base is None or base.num_rows < 2 or base[key].null_count:
        return False
    keys = base[key]
    if pa.types.is_integer(keys.type):
        values = keys.to_numpy()
        return bool(np.all(values[1:] > values[:-1]))
    flat = keys.combine_chunks()
    return bool(pc.all(pc.less(flat.slice(0, len(flat) - 1), flat.slice(1))).as_py())


def compact_slice(storage: Storage, reader: SliceReader, op: CompactionOperation, sl: FileSlice, token: str,
                  avro: dict[str, Any], options: ExecOptions) -> tuple[WriteStat, SliceInputs]:
    """Merge one planned slice into the new base file `<fileId>_<token>_<C>.parquet`; its write stat
    (Hudi's compaction stat fields) and what was read."""
    started = time.monotonic()
    blocks, rollbacks, corrupt, unseen = _block_stats(storage, sl, reader.visibility)
    base = reader.read_base(sl, keep_dictionaries=True)  # written as read: no decoding, no re-hashing
    # the log rows' few-valued columns too, unless cells of partial versions are picked one by one
    data, deletes = reader.read_logs(sl, keep_dictionaries=reader.partial is None) if sl.log_files else (None, None)
    scanned = time.monotonic()
    n_log_rows = (data.table.num_rows if data is not None else 0) + (
        len(deletes.keys) if deletes is not None else 0)
    key = reader.merge_key  # the integer key column where it equals the record key: no string hashing
    deletes = reader.by_merge_key(deletes)
    merged, counts = merge_slice_counted(base, data, deletes, reader.ordering_field, reader.schema, key_field=key,
                                         keep_dictionaries=True, partial=reader.partial,
                                         first_value=reader.first_value, in_place=_in_key_order(base, key))
    name = base_file_name(op.file_id, token, op.instant)
    size, footer = _write_base(storage, op.instant, op.partition, name, merged, avro, options, base is not None)
    done = time.monotonic()

    n_in_base = (base.num_rows if base is not None else 0) - counts.base_rows_deleted
    updated = counts.base_rows_met - counts.base_rows_deleted
    stat = WriteStat(
        file_id=op.file_id, path=join(op.partition, name), prev_commit=op.base_instant,
        num_writes=merged.num_rows, num_deletes=counts.base_rows_deleted, num_update_writes=updated,
        num_inserts=merged.num_rows - n_in_base, total_write_bytes=size, partition_path=op.partition,
        total_log_records=n_log_rows, total_log_files_compacted=len(sl.log_files),
        total_log_size_compacted=sum(lf.size for lf in sl.log_files),
        total_updated_records_compacted=counts.log_keys, total_log_blocks=blocks,
        total_corrupt_log_block=corrupt,
        total_rollback_blocks=rollbacks, file_size_in_bytes=size,
        runtime_stats={"totalScanTime": int((scanned - started) * 1000),
                       "totalUpsertTime": int((done - scanned) * 1000), "totalCreateTime": 0},
        column_ranges=file_ranges(footer),
    )
    logs = frozenset((lf.name, lf.size) for lf in sl.log_files)
    return stat, SliceInputs(op.key, op.base_instant, logs, frozenset(unseen))


def inputs_changed(storage: Storage, timeline: Timeline, instant: str, inputs: list[SliceInputs]) -> bool:
    """Whether a write changed a compacted slice while we read it: a log file added or grown there, or a
    block we skipped as uncommitted that has committed since."""
    vis = Visibility.of(timeline, None, timeline.layout)  # a pending commit's logs belong to the new slice
    listings: dict[str, list[tuple[str, int]]] = {}
    for inp in inputs:
        partition, file_id = inp.key
        if partition not in listings:
            listings[partition] = [(e.name, e.size) for e in storage.list(partition) if not e.is_dir]
        now = {(name, size) for name, size in listings[partition]
               if (lf := parse_log_file(partition, name)) is not None and lf.file_id == file_id
               and inp.base_instant <= vis.slice_time(lf.instant) < instant}
        if now != set(inp.logs) or any(timeline.contains_completed(t) for t in inp.unseen_instants):
            return True
    return False


def schema_metadata(timeline: Timeline, data_schema: pa.Schema, table_name: str) -> dict[str, str]:
    """The writer schema the compacted files were written with, copied from the newest commit recording it."""
    for inst in reversed(timeline.commits()):
        extra = timeline.commit_metadata(inst).extra_metadata or {}
        if extra.get("schema"):
            return {k: extra[k] for k in ("schema", ARROW_SCHEMA_KEY) if k in extra}
    return {"schema": json.dumps(arrow_to_avro(data_schema, table_name))}
