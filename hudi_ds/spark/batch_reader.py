"""Batch reads: file slices (big ones split, see hudi_ds.read.splits) packed into Spark partitions.

The driver plans (timeline, file-system view, pruning) once; each InputPartition carries the pickled FileSlices,
the SliceReader (storage by URI, schema, visibility) and the row filter, so executors rebuild nothing. Small
slices share a partition the way Spark packs small files (a Python task costs tens of milliseconds to start);
`hoodie.datasource.read.split.max.bytes=1` gives one partition per slice.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceReader, Filter, InputPartition
from pyspark.sql.types import StructType

from hudi_ds.config import TableConfig
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import load_config
from hudi_ds.errors import ConfigError
from hudi_ds.files.view import FileSlice, Visibility
from hudi_ds.read import filters as core_filters
from hudi_ds.read import query, retention
from hudi_ds.read.data_skipping import skip_slices
from hudi_ds.read.slice_reader import SliceReader
from hudi_ds.read.splits import SlicePart, pack, split_slice
from hudi_ds.schema.meta import COMMIT_TIME, META_COLUMNS
from hudi_ds.spark import pushdown, types
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline, normalize_instant_time

# pyspark 4.1-4.3 store the read plan of a filter pushdown on the relation (PythonDataSourceV2.readInfo) and
# reuse it for later scans of the same DataFrame that push no filter: a pushdown that prunes would leak into
# them. Later Spark keeps it per scan (it arrived with limit pushdown, DataSourceReader.pushLimit).
PUSHDOWN_PER_SCAN = hasattr(DataSourceReader, "pushLimit")


def load_snapshot(storage: Storage, metadata_listing: bool = True) -> query.TableSnapshot:
    """A reader's snapshot of the table: file listings from its metadata table unless `metadata_listing` is off
    (hoodie.metadata.enable=false among the read options)."""
    config = load_config(storage)
    timeline = Timeline.load(storage, config.layout_version, config.timeline_path)
    return query.TableSnapshot(storage, config, timeline, metadata_listing)


def instant_option(value: str | None, key: str) -> str | None:
    if value is None or value == "":
        return None
    if value.lower() in ("0", "000", "earliest"):
        return "0"
    try:
        return normalize_instant_time(value)
    except Exception as exc:  # noqa: BLE001 - any parse failure is a bad option value
        raise ConfigError(f"option {key}={value!r} is not an instant time (yyyyMMddHHmmssSSS or ISO-8601)") from exc


def read_schema(opts: HudiOptions, storage: Storage) -> pa.Schema:
    """Arrow schema (meta columns first) the query produces."""
    snap = load_snapshot(storage)
    as_of = instant_option(opts.as_of, "as.of.instant") if opts.query_type != "incremental" else None
    return without_meta_if_asked(opts, snap.reaching(as_of).full_schema(as_of))


def without_meta_if_asked(opts: HudiOptions, schema: pa.Schema) -> pa.Schema:
    """The schema without the _hoodie_* meta columns when the read options leave them out."""
    return schema if opts.meta_columns else pa.schema([f for f in schema if f.name not in META_COLUMNS])


class HudiInputPartition(InputPartition):
    """Slice parts packed into one Spark task, with everything needed to read them (no timeline access)."""

    def __init__(self, index: int, reader: SliceReader, parts: tuple[SlicePart, ...], include_logs: bool,
                 row_filter: core_filters.RowFilter, commit_times: tuple[str, ...] | None = None) -> None:
        super().__init__(index)
        self.reader = reader
        self.parts = parts
        self.include_logs = include_logs
        self.row_filter = row_filter
        self.commit_times = commit_times

    def read_part(self, part: SlicePart) -> pa.Table:
        table = self.reader.read_part(part, self.include_logs)
        if self.commit_times is not None:
            table = table.filter(pc.is_in(table[COMMIT_TIME],
                                          value_set=pa.array(self.commit_times, pa.string())))
        return self.row_filter.apply(table)

    def tables(self) -> Iterator[pa.Table]:
        for part in self.parts:
            yield self.read_part(part)

    def __repr__(self) -> str:
        return f"HudiInputPartition({self.value}, {list(self.parts)})"


@dataclass
class _Plan:
    snap: query.TableSnapshot
    schema: pa.Schema  # table schema the slices are read with
    visibility: Visibility
    slices: list[FileSlice]
    include_logs: bool
    commit_times: tuple[str, ...] | None


class HudiBatchReader(DataSourceReader):
    """Reader without pushFilters: Spark filters every row itself (the conf is off, or pushdown is not taken)."""

    def __init__(self, opts: HudiOptions, storage: Storage, schema: StructType) -> None:
        self.opts = opts
        self.storage = storage
        self.spark_schema = schema
        self.target = types.arrow_schema(schema)
        self.filters: list[core_filters.Filter] = []

    # ---- planning (driver) -----------------------------------------------------------------------
    def _plan(self) -> _Plan:
        opts = self.opts
        snap = load_snapshot(self.storage, opts.metadata_enable is not False)
        config: TableConfig = snap.config
        layout = config.layout_version
        if opts.query_type == "incremental":
            begin = instant_option(opts.begin_instant, "hoodie.datasource.read.begin.instanttime")
            if begin is None:
                raise ConfigError(
                    "hoodie.datasource.query.type=incremental needs hoodie.datasource.read.begin.instanttime "
                    "(an instant time, or 'earliest')")
            end = instant_option(opts.end_instant, "hoodie.datasource.read.end.instanttime")
            snap = snap.reaching(begin)
            in_range = query.commits_between(snap, begin, end)
            schema = snap.full_schema()
            vis = Visibility.of(snap.timeline, max(in_range) if in_range else None, layout)
            touched: set[tuple[str, str]] = set()
            for inst in snap.timeline.commits():
                if inst.requested_time in in_range:
                    meta = snap.timeline.commit_metadata(inst)
                    for partition, stats in meta.partition_to_write_stats.items():
                        touched.update((partition, s.file_id) for s in stats if s.file_id)
            view = snap.view(vis, core_filters.partition_pruner(config, self.filters, schema))
            if in_range:
                retention.require_files(view, f"the incremental range ({begin}, {end or 'latest'}]")
            slices = view.slices_in(sorted(touched)) if in_range else []
            return _Plan(snap, schema, vis, slices, config.is_mor, tuple(in_range))
        as_of = instant_option(opts.as_of, "as.of.instant")
        snap = snap.reaching(as_of)
        schema = snap.full_schema(as_of)
        vis = Visibility.of(snap.timeline, as_of, layout)
        view = snap.view(vis, core_filters.partition_pruner(config, self.filters, schema))
        if as_of is not None:
            retention.require_files(view, f"the table as of {as_of}")
        include_logs = config.is_mor and opts.query_type != "read_optimized"
        usable = [f for f in self.filters if f[0] in schema.names]
        slices = skip_slices(snap, view.latest_slices(), usable, schema, include_logs, latest=as_of is None)
        return _Plan(snap, schema, vis, slices, include_logs, None)

    def partitions(self) -> list[InputPartition]:
        plan = self._plan()
        usable = [f for f in self.filters if f[0] in plan.schema.names]
        reader = plan.snap.reader(plan.visibility, self._columns_to_read(plan, usable))
        row_filter = core_filters.RowFilter(tuple(usable), sql_nulls=True)
        opts = self.opts
        slices = plan.slices if opts.read_slices == "all" else [sl for sl in plan.slices if sl.log_files]
        parts = [p for sl in slices for p in split_slice(
            plan.snap.storage, sl, plan.include_logs, opts.split_max_bytes, opts.split_max_rows,
            can_split_merges=not reader.synthesize_meta)]
        min_partitions = opts.min_partitions or (os.cpu_count() or 2)
        bins = pack(parts, opts.split_max_bytes, opts.split_open_cost, min_partitions)
        return [HudiInputPartition(i, reader, tuple(b), plan.include_logs, row_filter, plan.commit_times)
                for i, b in enumerate(bins)]

    def _columns_to_read(self, plan: _Plan, filters: list[core_filters.Filter]) -> pa.Schema:
        """The table columns Spark asked for (a `.schema(...)` given to the read names fewer) and what merging,
        the incremental range and the filters need: the Python data source API has no column pruning."""
        asked = [c for c in self.target.names if c in plan.schema.names]
        return plan.snap.read_schema(plan.schema, asked, filters, plan.include_logs,
                                     incremental=plan.commit_times is not None)

    # ---- reading (executors) ---------------------------------------------------------------------
    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        if not isinstance(partition, HudiInputPartition):
            return  # Spark's placeholder partition when planning found no file slice
        for table in partition.tables():
            if table.num_rows:
                yield from types.batches(table, self.target)


class HudiPushdownReader(HudiBatchReader):
    """Reader that takes over the filters it evaluates exactly (and prunes partitions with them)."""

    def pushFilters(self, filters: list[Filter]) -> list[Filter]:  # noqa: N802 - Spark's API name
        rejected = []
        for f in filters:
            triple = pushdown.translate(f, self.target)
            if triple is None:
                rejected.append(f)
            else:
                self.filters.append(triple)
        return rejected


def pushdown_enabled() -> bool:
    """Whether Spark will accept a reader with pushFilters in this planning process.

    pyspark 4.1+ plans reads in a Python worker: `data_source_pushdown_filters` (conf on) calls pushFilters;
    `plan_data_source_read` (conf off) fails if the reader defines it. The conf is not passed to `reader()`,
    so we look at the planning frame; HUDI_DS_SPARK_PUSHDOWN=0/1 overrides.
    """
    forced = os.environ.get("HUDI_DS_SPARK_PUSHDOWN")
    if forced in ("0", "1"):
        return forced == "1"
    import sys

    frame = sys._getframe(1)
    while frame is not None:
        module = frame.f_code.co_filename
        if module.endswith("data_source_pushdown_filters.py"):
            return True
        if module.endswith("plan_data_source_read.py") and "enable_pushdown" in frame.f_locals:
            return bool(frame.f_locals["enable_pushdown"])
        frame = frame.f_back  # type: ignore[assignment]
    return False
