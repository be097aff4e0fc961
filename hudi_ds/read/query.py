"""Snapshot, read-optimized, time-travel and incremental queries over a table."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config import TableConfig
from hudi_ds.errors import ConfigError
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.read import filters as flt
from hudi_ds.read.schema_resolver import resolve_schema
from hudi_ds.read.slice_reader import SliceReader
from hudi_ds.schema.meta import with_meta
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline

_THREADS = max(2, min(8, os.cpu_count() or 2))


@dataclass(frozen=True)
class TableSnapshot:
    """One consistent look at a table: its config and timeline, loaded once per query."""

    storage: Storage
    config: TableConfig
    timeline: Timeline

    def data_schema(self, as_of: str | None = None) -> pa.Schema | None:
        return resolve_schema(self.config, self.timeline, as_of)

    def full_schema(self, as_of: str | None = None) -> pa.Schema:
        data = self.data_schema(as_of)
        return with_meta(data if data is not None else pa.schema([]))

    def ordering_field(self) -> str | None:
        if (self.config.raw.get("hoodie.record.merge.mode") or "").upper() == "COMMIT_TIME_ORDERING":
            return None
        return self.config.ordering_field

    def reader(self, visibility: Visibility, schema: pa.Schema, committed: dict[str, str] | None = None) -> SliceReader:
        ordering = self.ordering_field()
        if ordering is not None and ordering not in schema.names:
            ordering = None
        logs = frozenset(p for p in (committed or {}) if ".log." in p)
        return SliceReader(self.storage, schema, ordering, visibility, not self.config.populate_meta_fields, logs)

    def view(self, visibility: Visibility, partition_filter: Callable[[str], bool] | None = None) -> FileSystemView:
        return FileSystemView(self.storage, self.config, self.timeline, visibility, partition_filter)


def _read_slices(
    reader: SliceReader,
    slices: list[FileSlice],
    include_logs: bool,
    post: Callable[[pa.Table], pa.Table],
) -> list[pa.Table]:
    def one(sl: FileSlice) -> pa.Table:
        return post(reader.read(sl, include_logs))

    if len(slices) <= 1:
        return [one(s) for s in slices]
    with ThreadPoolExecutor(_THREADS) as pool:
        return list(pool.map(one, slices))


def _finish(tables: list[pa.Table], schema: pa.Schema, columns: Sequence[str] | None) -> pa.Table:
    out_schema = schema if columns is None else pa.schema([schema.field(c) for c in columns])
    tables = [t for t in tables if t.num_rows]
    if not tables:
        return out_schema.empty_table()
    return pa.concat_tables(tables)


def _check_columns(schema: pa.Schema, columns: Sequence[str] | None) -> list[str] | None:
    if columns is None:
        return None
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ConfigError(f"columns {missing} are not in the table; columns are {', '.join(schema.names)}")
    return list(columns)


def snapshot(
    snap: TableSnapshot,
    as_of: str | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    columns: Sequence[str] | None = None,
    read_optimized: bool = False,
) -> pa.Table:
    schema = snap.full_schema(as_of)
    cols = _check_columns(schema, columns)
    fl = flt.normalize(filters, schema)
    vis = Visibility.of(snap.timeline, as_of, snap.config.layout_version)
    view = snap.view(vis, flt.partition_pruner(snap.config, fl, schema))
    expr = flt.expression(fl, schema)

    def post(t: pa.Table) -> pa.Table:
        if expr is not None:
            t = t.filter(expr)
        return t.select(cols) if cols is not None else t

    committed = view.committed_paths()
    view.check_committed_files(committed)
    slices = view.latest_slices()
    include_logs = not read_optimized and snap.config.is_mor
    return _finish(_read_slices(snap.reader(vis, schema, committed), slices, include_logs, post), schema, cols)


def commits_between(snap: TableSnapshot, start: str, end: str | None) -> list[str]:
    """Requested times of the commits in (start, end], ordered as the timeline orders them
    (instant time on v6 tables, completion time on v8+)."""
    out = []
    for inst in snap.timeline.commits():
        key = inst.completion_time if (snap.config.layout_version >= 2 and inst.completion_time) else inst.requested_time
        if key > start and (end is None or key <= end):
            out.append(inst.requested_time)
    return out


def incremental(
    snap: TableSnapshot,
    start: str,
    end: str | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    """Latest image (as of `end`) of the records whose newest change falls in (start, end]."""
    in_range = commits_between(snap, start, end)
    schema = snap.full_schema()
    cols = _check_columns(schema, columns)
    fl = flt.normalize(filters, schema)
    if not in_range:
        return _finish([], schema, cols)
    last = max(in_range)
    vis = Visibility.of(snap.timeline, last, snap.config.layout_version)
    touched: set[tuple[str, str]] = set()
    for inst in snap.timeline.commits():
        if inst.requested_time in in_range:
            for partition, stats in snap.timeline.commit_metadata(inst).partition_to_write_stats.items():
                touched.update((partition, s.file_id) for s in stats if s.file_id)
    view = snap.view(vis, flt.partition_pruner(snap.config, fl, schema))
    in_range_arr = pa.array(in_range, pa.string())
    expr = flt.expression(fl, schema)

    def post(t: pa.Table) -> pa.Table:
        t = t.filter(pc.is_in(t["_hoodie_commit_time"], value_set=in_range_arr))
        if expr is not None:
            t = t.filter(expr)
        return t.select(cols) if cols is not None else t

    committed = view.committed_paths()
    view.check_committed_files(committed)
    slices = view.slices_in(sorted(touched))
    return _finish(_read_slices(snap.reader(vis, schema, committed), slices, snap.config.is_mor, post), schema, cols)
