"""Snapshot, read-optimized, time-travel and incremental queries over a table."""

from __future__ import annotations

import os
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, replace
from functools import cached_property
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config import TableConfig
from hudi_ds.errors import ConfigError, CorruptTableError
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.keys.keygen import integer_key_column
from hudi_ds.metadata.layout import MetadataTable, listed_partitions
from hudi_ds.metadata.records import FILES
from hudi_ds.read import filters as flt
from hudi_ds.read import retention
from hudi_ds.read.data_skipping import skip_slices
from hudi_ds.read.schema_resolver import resolve_schema
from hudi_ds.read.slice_reader import SliceReader
from hudi_ds.read.splits import SlicePart, split_slice
from hudi_ds.schema.meta import COMMIT_TIME, RECORD_KEY, with_meta
from hudi_ds.storage import FileEntry, Storage
from hudi_ds.timeline import Timeline
from hudi_ds.timeline.archived import with_history

if TYPE_CHECKING:  # the metadata table's readers are imported where a table has one (issue 32)
    from hudi_ds.metadata.column_stats import StatsByFile

READ_THREADS = max(2, min(8, os.cpu_count() or 2))


@dataclass(frozen=True)
class TableSnapshot:
    """One consistent look at a table: its config and timeline, loaded once per query."""

    storage: Storage
    config: TableConfig
    timeline: Timeline
    metadata_listing: bool = False  # readers: file listings from the metadata table when the table has one

    @cached_property
    def listed_files(self) -> list[FileEntry] | None:
        """The table's files as its metadata table lists them (no LIST of a data partition), as Hudi's and
        hudi-rs's readers take them for version 8/9 tables; None where they list storage instead: writers
        (`metadata_listing` off: they must see the files of pending writes), version 6 tables, tables without a
        metadata table (hoodie.table.metadata.partitions of the config; a listing is right either way, and when
        a writer dropped the metadata table since the config was loaded the properties are read again)."""
        if not self.metadata_listing or self.config.layout_version < 2 or FILES not in self.config.metadata_partitions:
            return None
        from hudi_ds.metadata.listing import (
            data_files,  # HFile readers: only for tables with a metadata table
        )

        try:
            mdt = MetadataTable.open(self.storage)
        except CorruptTableError:
            if FILES not in listed_partitions(self.storage):
                return None  # dropped: the property goes first, then the folder
            raise
        return data_files(mdt, self.timeline)

    def index_stats(self, partition: str, columns: Sequence[str]) -> StatsByFile | None:
        """The statistics of `columns` in metadata partition `partition` (COLUMN_STATS or PARTITION_STATS) for
        data skipping (hudi_ds.read.data_skipping); None where a reader does not use them: as for
        `listed_files`, and when the table has no such index."""
        if not self.metadata_listing or self.config.layout_version < 2 \
                or partition not in self.config.metadata_partitions:
            return None
        from hudi_ds.metadata.column_stats import read_stats

        try:
            return read_stats(MetadataTable.open(self.storage), partition, self.timeline, columns)
        except CorruptTableError:
            if partition not in listed_partitions(self.storage):
                return None  # dropped since the config was loaded
            raise

    def reaching(self, instant: str | None) -> TableSnapshot:
        """This snapshot for a query reaching back to `instant`: with the archived instants when it needs them
        (hudi_ds.read.retention.reaches_history); a query of the active timeline reads no archive."""
        if instant is None or not retention.reaches_history(self.timeline, instant):
            return self
        return self.with_history()

    def with_history(self) -> TableSnapshot:
        """This snapshot, its timeline preceded by the archived instants (itself if there are none)."""
        full = with_history(self.timeline)
        return self if full is self.timeline else replace(self, timeline=full)

    def data_schema(self, as_of: str | None = None) -> pa.Schema | None:
        return resolve_schema(self.config, self.timeline, as_of)

    def full_schema(self, as_of: str | None = None) -> pa.Schema:
        data = self.data_schema(as_of)
        return with_meta(data if data is not None else pa.schema([]))

    def ordering_field(self) -> str | None:
        """The field merging compares (none under commit-time ordering); a custom merger is refused."""
        return self.config.merge_ordering_field()

    def read_schema(self, schema: pa.Schema, columns: Sequence[str] | None, filters: Sequence[flt.Filter],
                    merges: bool, incremental: bool = False) -> pa.Schema:
        """The columns a query has to decode: those asked for, those its filters and merging (record key,
        ordering field) and an incremental range (commit time) need. The meta columns are strings unique per
        row, the costliest to decode: a read that names its columns skips them."""
        if columns is None:
            return schema
        needed = set(columns) | {f[0] for f in filters}
        ordering = self.ordering_field()
        if merges:
            needed |= {self.merge_key(schema)} | ({ordering} if ordering else set())
        if incremental:
            needed.add(COMMIT_TIME)
        return pa.schema([f for f in schema if f.name in needed], metadata=schema.metadata)

    def merge_key(self, schema: pa.Schema) -> str:
        """The column merging matches records by: an integer column equal to the record key when the key
        generator makes it so (hashing integers is cheaper, and a read naming its columns skips the key
        strings), else the record key."""
        c = self.config
        proxy = integer_key_column(c.key_generator, c.record_key_fields, c.partition_fields, schema) \
            if c.populate_meta_fields else None
        return proxy or RECORD_KEY

    def reader(self, visibility: Visibility, schema: pa.Schema, committed: dict[str, str] | None = None) -> SliceReader:
        ordering = self.ordering_field()
        if ordering is not None and ordering not in schema.names:
            ordering = None
        logs = frozenset(p for p in (committed or {}) if ".log." in p)
        key = self.merge_key(schema)
        return SliceReader(self.storage, schema, ordering, visibility, not self.config.populate_meta_fields, logs,
                           key if key in schema.names else RECORD_KEY, self.config.partial_update(),
                           tuple(self.config.record_key_fields), self.config.first_value)

    def view(self, visibility: Visibility, partition_filter: Callable[[str], bool] | None = None) -> FileSystemView:
        return FileSystemView(self.storage, self.config, self.timeline, visibility, partition_filter,
                              self.listed_files)


def _finish(tables: list[pa.Table], out_schema: pa.Schema) -> pa.Table:
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


@dataclass(frozen=True)
class ReadPlan:
    """The slices a query reads and how to turn each into output rows; picklable, so a Spark task
    can read one slice with nothing else."""

    reader: SliceReader
    slices: list[FileSlice]
    include_logs: bool
    schema: pa.Schema
    columns: list[str] | None
    filter_expr: pc.Expression | None
    commit_times: pa.Array | None = None  # incremental: keep rows written by these commits only

    @property
    def output_schema(self) -> pa.Schema:
        return self.schema if self.columns is None else pa.schema([self.schema.field(c) for c in self.columns])

    def read_slice(self, sl: FileSlice) -> pa.Table:
        return self.read_part(SlicePart(sl))

    def read_part(self, part: SlicePart) -> pa.Table:
        t = self.reader.read_part(part, self.include_logs)
        if self.commit_times is not None:
            t = t.filter(pc.is_in(t[COMMIT_TIME], value_set=self.commit_times))
        if self.filter_expr is not None:
            t = t.filter(self.filter_expr)
        return t.select(self.columns) if self.columns is not None else t

    def read_all(self) -> pa.Table:
        if len(self.slices) <= 1:
            tables = [self.read_slice(s) for s in self.slices]
        else:
            with ThreadPoolExecutor(READ_THREADS) as pool:
                tables = list(pool.map(self.read_slice, self.slices))
        return _finish(tables, self.output_schema)

    def split(self, max_bytes: int, max_rows: int) -> list[SlicePart]:
        """The plan's slices as parts of at most `max_bytes` / `max_rows` (see hudi_ds.read.splits)."""
        storage, merges_ok = self.reader.storage, not self.reader.synthesize_meta
        return [p for sl in self.slices
                for p in split_slice(storage, sl, self.include_logs, max_bytes, max_rows, merges_ok)]


def plan_snapshot(
    snap: TableSnapshot,
    as_of: str | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    columns: Sequence[str] | None = None,
    read_optimized: bool = False,
) -> ReadPlan:
    snap = snap.reaching(as_of)
    schema = snap.full_schema(as_of)
    cols = _check_columns(schema, columns)
    fl = flt.normalize(filters, schema)
    vis = Visibility.of(snap.timeline, as_of, snap.config.layout_version)
    view = snap.view(vis, flt.partition_pruner(snap.config, fl, schema))
    committed = retention.require_files(view, f"the table as of {as_of}")
    include_logs = not read_optimized and snap.config.is_mor
    return ReadPlan(
        reader=snap.reader(vis, snap.read_schema(schema, cols, fl, include_logs), committed),
        slices=skip_slices(snap, view.latest_slices(), fl, schema, include_logs, latest=as_of is None),
        include_logs=include_logs,
        schema=schema,
        columns=cols,
        filter_expr=flt.expression(fl, schema),
    )


def snapshot(
    snap: TableSnapshot,
    as_of: str | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    columns: Sequence[str] | None = None,
    read_optimized: bool = False,
) -> pa.Table:
    return plan_snapshot(snap, as_of, filters, columns, read_optimized).read_all()


def commits_between(snap: TableSnapshot, start: str, end: str | None) -> list[str]:
    """Requested times of the commits in (start, end], ordered as the timeline orders them
    (instant time on v6 tables, completion time on v8+)."""
    out = []
    for inst in snap.timeline.commits():
        key = inst.completion_time if (snap.config.layout_version >= 2 and inst.completion_time) else inst.requested_time
        if key > start and (end is None or key <= end):
            out.append(inst.requested_time)
    return out


def plan_incremental(
    snap: TableSnapshot,
    start: str,
    end: str | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    columns: Sequence[str] | None = None,
) -> ReadPlan:
    """Latest image (as of `end`) of the records whose newest change falls in (start, end]."""
    snap = snap.reaching(start)
    in_range = commits_between(snap, start, end)
    schema = snap.full_schema()
    cols = _check_columns(schema, columns)
    fl = flt.normalize(filters, schema)
    if not in_range:
        vis = Visibility.of(snap.timeline, None, snap.config.layout_version)
        return ReadPlan(snap.reader(vis, schema), [], False, schema, cols, None)
    vis = Visibility.of(snap.timeline, max(in_range), snap.config.layout_version)
    touched: set[tuple[str, str]] = set()
    for inst in snap.timeline.commits():
        if inst.requested_time in in_range:
            for partition, stats in snap.timeline.commit_metadata(inst).partition_to_write_stats.items():
                touched.update((partition, s.file_id) for s in stats if s.file_id)
    view = snap.view(vis, flt.partition_pruner(snap.config, fl, schema))
    committed = retention.require_files(view, f"the incremental range ({start}, {end or 'latest'}]")
    return ReadPlan(
        reader=snap.reader(vis, snap.read_schema(schema, cols, fl, snap.config.is_mor, incremental=True), committed),
        slices=view.slices_in(sorted(touched)),
        include_logs=snap.config.is_mor,
        schema=schema,
        columns=cols,
        filter_expr=flt.expression(fl, schema),
        commit_times=pa.array(in_range, pa.string()),
    )


def incremental(
    snap: TableSnapshot,
    start: str,
    end: str | None = None,
    filters: Sequence[Sequence[Any]] | None = None,
    columns: Sequence[str] | None = None,
) -> pa.Table:
    return plan_incremental(snap, start, end, filters, columns).read_all()
