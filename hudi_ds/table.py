"""HudiTable: the Python API used by notebooks, the CLI and the Spark layer. It only wires the core
together: config and timeline to read, the write client (with the table services as post-commit hooks) to
write. What only writes, table services, rollback, version changes and the change feed use is imported by the
methods that need it: `import hudi_ds` and a read in a fresh process do not pay for it (issue 32). So is the
option registry (pydantic): a table opened without options builds it only when a write or a service asks."""

from __future__ import annotations

from collections.abc import Callable, Generator, Iterator, Mapping, Sequence
from typing import TYPE_CHECKING, Any, TypeVar

import pyarrow as pa

from hudi_ds.config.table_config import load_config
from hudi_ds.errors import ConfigError
from hudi_ds.read import filters as flt
from hudi_ds.read import query
from hudi_ds.storage import open_storage
from hudi_ds.timeline import Instant, Timeline, normalize_instant_time
from hudi_ds.timeline.moving import on_latest_timeline

if TYPE_CHECKING:
    from hudi_ds.config.options import HudiOptions
    from hudi_ds.write.client import WriteClient

T = TypeVar("T")


def _names(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


def _range_start(start: str) -> str:
    """The exclusive start of an incremental range: an instant time, or "0" for "earliest" / "0" / "000" (the
    values hoodie.datasource.read.begin.instanttime takes for every commit)."""
    if isinstance(start, str) and start.strip().lower() in ("0", "000", "earliest"):
        return "0"
    return normalize_instant_time(start)


class HudiTable:
    """An Apache Hudi table on local disk or in an object store (`s3://`, `s3a://`, `gs://`, `az://`, `abfs(s)://`).

    `storage_options` holds the store's endpoint and credentials with the key names delta-rs, polars and
    hudi-rs use (`AWS_ENDPOINT_URL`, `AWS_ACCESS_KEY_ID`, ...; docs/object-stores.md); without them the
    environment's are used.

    `options` takes any key of the option registry (docs/options.md), as Spark's `.option(...)` does: write
    settings (parquet codec, log block format), and the table services that run after each `write()`
    (compaction every `compaction.delta_commits` delta commits, inline or async, clean, archive)."""

    def __init__(self, path: str, options: Mapping[str, Any] | None = None, *,
                 storage_options: Mapping[str, Any] | None = None) -> None:
        self.path = str(path)
        self.storage = open_storage(self.path, storage_options)
        self._options: HudiOptions | None = None
        if options is not None and not (isinstance(options, Mapping) and len(options) == 0):
            from hudi_ds.config.option_parsing import parse_options

            self._options = parse_options(options)  # bad options fail here, before anything is read
        self.config = load_config(self.storage)

    @property
    def options(self) -> HudiOptions:
        """The options given, validated, with the registry's defaults for the others (docs/options.md)."""
        if self._options is None:
            from hudi_ds.config.option_parsing import parse_options

            self._options = parse_options(None)
        return self._options

    # ---- creation ---------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str,
        *,
        table_name: str,
        record_key: str | Sequence[str] | None = None,
        ordering_field: str | None = None,
        partition_by: str | Sequence[str] | None = None,
        table_type: str | None = None,
        buckets: int | None = None,
        hive_style_partitioning: bool | None = None,
        url_encode_partitions: bool | None = None,
        options: Mapping[str, Any] | None = None,
        storage_options: Mapping[str, Any] | None = None,
    ) -> HudiTable:
        """Create a table (version 6 and the bucket index unless the options say otherwise: hoodie.write.table.version,
        hoodie.index.type), or open it if it exists with the same settings.

        The keyword arguments are the friendly spelling of the table options (`table_type` MERGE_ON_READ by
        default, `buckets` 4, both partitioning flags off); `options` takes any registry key besides, and a
        table setting given both ways must agree. Without `record_key` the table is key-less (append-only):
        every row gets a generated key, as in Apache Hudi 0.14+, and writes insert, bulk_insert or overwrite.
        Table settings are recorded in hoodie.properties; writer settings among `options` (compaction scheduling,
        file sizes, ...) act on the writes of the returned object only, as Hudi's writer configs are per write:
        pass them again to a table opened later (`HudiTable(path, options)`)."""
        declared = {
            "table_name": table_name, "record_key": None if record_key is None else _names(record_key),
            "ordering_field": ordering_field, "partition_fields": _names(partition_by) or None,
            "table_type": table_type, "num_buckets": buckets, "hive_style": hive_style_partitioning,
            "url_encode": url_encode_partitions,
        }
        from hudi_ds.config.option_parsing import key_of, parse_options
        from hudi_ds.config.table_shape import TABLE_SETTINGS

        given = parse_options(options)
        for name, value in declared.items():
            if value is None or not given.is_set(name):
                continue
            if getattr(given.with_values(**{name: value}), name) != getattr(given, name):
                raise ConfigError(
                    f"{name}={value!r} and the option {key_of(name)}={getattr(given, name)!r} set the same table "
                    "setting to different values; keep one")
        # every table setting counts as declared: create() over an existing table checks them all
        table_settings = {name: getattr(given, name) for name, _, _ in TABLE_SETTINGS
                          if name != "num_buckets" or given.index_type == "BUCKET" or buckets is not None}
        table_settings.update({k: v for k, v in declared.items() if v is not None})
        opts = given.with_values(**table_settings)
        from hudi_ds.write.client import create_table

        create_table(open_storage(str(path), storage_options), opts)
        return cls(path, options=options, storage_options=storage_options)

    # ---- inspection -------------------------------------------------------------------------------------
    def load_timeline(self) -> Timeline:
        """The active timeline as it is now (instants, their metadata)."""
        return Timeline.load(self.storage, self.config.layout_version, self.config.timeline_path)

    def snapshot(self) -> query.TableSnapshot:
        """The table as it is now (configuration, timeline, schema, file groups), for lower-level queries."""
        return self._snapshot(self.load_timeline())

    def _snapshot(self, timeline: Timeline) -> query.TableSnapshot:
        """A reader's snapshot: file listings from the metadata table unless hoodie.metadata.enable=false."""
        listing = self._options is None or self._options.metadata_enable is not False  # none given: unset
        return query.TableSnapshot(self.storage, self.config, timeline, listing)

    def _read(self, read: Callable[[query.TableSnapshot], T]) -> T:
        """`read` on the table as it is now, planned again if writers moved on while it ran."""
        return on_latest_timeline(self.load_timeline, lambda timeline: read(self._snapshot(timeline)))

    def timeline(self) -> list[Instant]:
        """All instants on the active timeline, oldest first."""
        return list(self.load_timeline().instants)

    @property
    def schema(self) -> pa.Schema:
        """The data columns (without the _hoodie_* meta columns)."""
        s = self._read(lambda snap: snap.data_schema())
        return s if s is not None else pa.schema([])

    # ---- reads ------------------------------------------------------------------------------------------
    def to_arrow(
        self,
        as_of: str | None = None,
        filters: Sequence[Sequence[Any]] | None = None,
        columns: Sequence[str] | None = None,
        read_optimized: bool = False,
    ) -> pa.Table:
        """Snapshot (or time-travel with `as_of`) read, merged per record key. Time travel reaches archived
        commits too; CleanedInstantsError when cleaning removed the files of the state `as_of` names."""
        at = normalize_instant_time(as_of) if as_of is not None else None
        return self._read(lambda snap: query.snapshot(snap, at, filters, columns,
                                                                                 read_optimized))

    def to_batches(
        self,
        as_of: str | None = None,
        filters: Sequence[Sequence[Any]] | None = None,
        columns: Sequence[str] | None = None,
        read_optimized: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        """The snapshot one merged file slice at a time: memory holds one slice, whatever the table size."""
        at = normalize_instant_time(as_of) if as_of is not None else None
        plan = self._read(lambda snap: query.plan_snapshot(snap, at, filters, columns,
                                                                                      read_optimized))
        for sl in plan.slices:
            yield from plan.read_slice(sl).to_batches()

    def to_polars(self, as_of: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                  columns: Sequence[str] | None = None, read_optimized: bool = False) -> Any:
        import polars as pl

        return pl.from_arrow(self.to_arrow(as_of, filters, columns, read_optimized))

    def incremental(self, start: str, end: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                    columns: Sequence[str] | None = None) -> pa.Table:
        """The latest image of records changed in (start, end], archived commits included; `start` "earliest" (or
        "0") for every commit. CleanedInstantsError when cleaning removed the file versions of the table as of
        `end` (never for the latest commit)."""
        s = _range_start(start)
        e = normalize_instant_time(end) if end is not None else None
        return self._read(lambda snap: query.incremental(snap, s, e, filters, columns))

    def changes(self, start: str, end: str | None = None) -> pa.Table:
        """The change feed of commits in (start, end]: `_change_type` (insert, update_preimage,
        update_postimage, delete) and `_commit_time` per row, in commit order; archived commits included; `start`
        "earliest" (or "0") for every commit. CleanedInstantsError when cleaning removed the file versions a
        commit's changes are read from."""
        from hudi_ds.read import changes as change_feed

        s = _range_start(start)
        e = normalize_instant_time(end) if end is not None else None
        return self._read(lambda snap: change_feed.changes(snap, s, e))

    # ---- lazy reads and other engines (docs/notebooks.md) --------------------------------------------------
    def scan(self, as_of: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
             columns: Sequence[str] | None = None, read_optimized: bool = False) -> Any:
        """A polars LazyFrame of the snapshot (time travel with `as_of`, base files only with `read_optimized`).

        Nothing is read until it is collected; then only the columns the query uses, the partitions its
        filter allows and the row groups whose statistics may match are read, and a `head(n)` stops early.
        The table is the one of this call: later commits are not seen."""
        from hudi_ds.read import lazy, polars_scan

        at = normalize_instant_time(as_of) if as_of is not None else None
        snap = self.snapshot()
        given: list[Sequence[Any]] = list(filters or [])
        flt.normalize(given, snap.full_schema(at))  # bad filters fail here, not when collected
        schema = polars_scan.output_schema(snap.full_schema(at), columns)

        def batches(pushed: list[flt.Filter], needed: list[str]) -> Generator[pa.Table, None, None]:
            stream = lazy.snapshot_stream(snap, at, [*given, *pushed], needed, read_optimized)
            return stream.tables(ahead=query.READ_THREADS)

        return polars_scan.lazy_frame(schema, batches)

    def scan_incremental(self, start: str, end: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                         columns: Sequence[str] | None = None) -> Any:
        """`incremental()` as a polars LazyFrame: the latest image of records changed in (start, end]."""
        from hudi_ds.read import lazy, polars_scan

        s = _range_start(start)
        e = normalize_instant_time(end) if end is not None else None
        snap = self.snapshot()
        given: list[Sequence[Any]] = list(filters or [])
        flt.normalize(given, snap.full_schema())
        schema = polars_scan.output_schema(snap.full_schema(), columns)

        def batches(pushed: list[flt.Filter], needed: list[str]) -> Generator[pa.Table, None, None]:
            return lazy.incremental_stream(snap, s, e, [*given, *pushed], needed).tables(ahead=query.READ_THREADS)

        return polars_scan.lazy_frame(schema, batches)

    def scan_changes(self, start: str, end: str | None = None) -> Any:
        """`changes()` as a polars LazyFrame, read one commit at a time: a filter on partition columns skips
        the other partitions' file groups, and a `head(n)` stops after the commits it needed."""
        from hudi_ds.read import changes as change_feed
        from hudi_ds.read import lazy, polars_scan

        s = _range_start(start)
        e = normalize_instant_time(end) if end is not None else None
        snap = self.snapshot()

        def batches(pushed: list[flt.Filter], needed: list[str]) -> Generator[pa.Table, None, None]:
            return lazy.change_tables(snap, s, e, pushed)

        return polars_scan.lazy_frame(change_feed.change_schema(snap), batches)

    def to_batch_reader(self, as_of: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                        columns: Sequence[str] | None = None, read_optimized: bool = False) -> pa.RecordBatchReader:
        """The snapshot as an Arrow RecordBatchReader that merges one file slice at a time (memory holds one
        slice): DuckDB, DataFusion and pyarrow query it as a stream, log files merged."""
        from hudi_ds.read import engines, lazy  # pyarrow.dataset costs a second to import: only when used

        at = normalize_instant_time(as_of) if as_of is not None else None
        stream = self._read(lambda snap: lazy.snapshot_stream(snap, at, filters or [], columns, read_optimized))
        return engines.batch_reader(stream)

    def to_pyarrow_dataset(self, as_of: str | None = None, read_optimized: bool = False) -> Any:
        """The snapshot's base files as a pyarrow Dataset (the table's schema, meta columns included), for
        engines that push filters and projections into parquet themselves (DuckDB, DataFusion, pyarrow).

        Only where no log file needs merging: copy-on-write tables, merge-on-read tables just compacted, and
        `read_optimized`; elsewhere UnsupportedTableError points to scan() and to_batch_reader(). DuckDB reads a
        Dataset through pyarrow's scanner at about half the speed of its own parquet reader, which to_duckdb() uses."""
        from hudi_ds.read import engines

        at = normalize_instant_time(as_of) if as_of is not None else None
        return engines.base_file_dataset(
            self._read(lambda snap: query.plan_snapshot(snap, at, None, None, read_optimized)))

    def to_duckdb(self, name: str = "hudi", connection: Any = None, as_of: str | None = None,
                  read_optimized: bool = False) -> Any:
        """The snapshot as a DuckDB view or table called `name` in `connection` (DuckDB's default connection,
        which `duckdb.sql()` queries, when None), which it returns. Where no log file needs merging and the table is on local disk, a view over DuckDB's
        own read_parquet of the base files (DuckDB prunes and parallelises the parquet reads itself); on object
        stores the base files as an Arrow dataset; where logs must be merged, the merged snapshot as an Arrow table
        (memory holds it: to_batch_reader() streams instead). DuckDB is optional: `pip install 'hudi-ds[duckdb]'`."""
        from hudi_ds.read import engines

        at = normalize_instant_time(as_of) if as_of is not None else None
        plan = self._read(lambda snap: query.plan_snapshot(snap, at, None, None, read_optimized))
        return engines.duckdb_relation(plan, connection, name)

    def to_pandas(self, as_of: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                  columns: Sequence[str] | None = None, read_optimized: bool = False) -> Any:
        """`to_arrow()` as a pandas DataFrame (pandas is optional: `pip install 'hudi-ds[pandas]'`)."""
        from hudi_ds.read import engines

        engines.optional("pandas")
        return self.to_arrow(as_of, filters, columns, read_optimized).to_pandas()

    def history(self, include_all: bool = False) -> Any:
        """The timeline as a polars DataFrame, one row per instant with what each commit wrote (rows, files,
        bytes), as `hudi-py timeline` shows it; `include_all` adds clean, rollback and other actions. A
        notebook shows it as a table."""
        import polars as pl

        from hudi_ds.cli import report

        return pl.from_arrow(report.timeline_table(report.timeline(self, include_all)["instants"]))

    def _repr_html_(self) -> str:
        """A notebook's view of the table: type, version, partitions, schema and the last commits."""
        from hudi_ds.cli import html, report

        return html.table_summary(report.info(self), report.timeline(self, False)["instants"])

    # ---- writes -----------------------------------------------------------------------------------------
    def write(self, data: Any, operation: str | None = None, *, buffer_bytes: int | None = None) -> str:
        """Write data as one atomic commit; returns the committed instant time. The table services the options
        ask for run after the commit.

        `operation` defaults to upsert (insert on a table without a record key). `buffer_bytes` caps the rows
        held in memory before file groups are spilled to local disk (default 256 MiB): an iterable of batches
        of any total size is written in bounded memory."""
        return self.write_client().write(data, operation, buffer_bytes=buffer_bytes)

    def delete_partitions(self, partitions: str | Sequence[str]) -> str:
        """Apache Hudi's delete_partition: one replacecommit that replaces every file group of `partitions`
        (partition paths as the table writes them, e.g. "dt=2024-01-01"; `*` matches any characters; paths the
        table does not have are skipped), so no read sees their rows; returns the instant. The same as a write
        with operation delete_partition and hoodie.datasource.write.partitions.to.delete."""
        named = [partitions] if isinstance(partitions, str) else list(partitions)
        bad = [p for p in named if not isinstance(p, str) or not p.strip() or "," in p]
        if bad or not named:
            raise ConfigError(f"delete_partitions takes partition paths (non-empty strings without ','), got "
                              f"{partitions!r}; e.g. ['dt=2024-01-01', 'dt=2024-02-*']")
        client = self.write_client()
        client.options = client.options.model_copy(update={"partitions_to_delete": ",".join(named)})
        return client.write([], "delete_partition")

    def write_client(self) -> WriteClient:
        """The write client of this table, with its options and table services (at the version the options ask
        for: hoodie.write.table.version / hoodie.write.auto.upgrade). Table settings among the options must match
        the table's, as for Spark writes (TableExistsError otherwise)."""
        from hudi_ds.config.table_shape import check_against_table
        from hudi_ds.services.post_commit import TableServices
        from hudi_ds.upgrade import check_version
        from hudi_ds.write.client import WriteClient

        check_against_table(self.options, self.config, self.path)
        self.config = check_version(self.storage, self.options, self.config)
        return WriteClient(self.storage, self.config, self.options, hooks=[TableServices(self.options)])

    # ---- table services ---------------------------------------------------------------------------------
    def schedule_compaction(self, min_delta_commits: int = 1) -> str | None:
        """Plan a compaction of every file slice with log files, once `min_delta_commits` delta commits
        accumulated since the last one; returns the compaction instant (None: nothing to do now)."""
        from hudi_ds.config.writable import check_writable
        from hudi_ds.services import compaction

        check_writable(self.config)
        return compaction.schedule_compaction(self, min_delta_commits=min_delta_commits)

    def run_compaction(self, instant: str | None = None) -> list[str]:
        """Execute pending compaction plans (or one): merged slices become new base files."""
        from hudi_ds.config.writable import check_writable
        from hudi_ds.services import compaction

        check_writable(self.config)
        return compaction.run_compaction(self, instant, heartbeat_timeout_s=self.options.heartbeat_timeout_s)

    def compact(self, min_delta_commits: int = 1) -> list[str]:
        """Schedule and run a compaction (merge-on-read tables); returns the completed compaction instants."""
        from hudi_ds.config.writable import check_writable
        from hudi_ds.services import compaction

        check_writable(self.config)
        return compaction.compact(self, min_delta_commits=min_delta_commits,
                                  heartbeat_timeout_s=self.options.heartbeat_timeout_s)

    def clean(self, retain_commits: int | None = None) -> str | None:
        """Delete the file versions the cleaning policy of the options no longer keeps (hoodie.clean.policy;
        default: those no query on the last hoodie.clean.commits.retained commits needs, 10), or, given
        `retain_commits`, those no query on the last `retain_commits` commits needs; returns the clean instant."""
        from hudi_ds.config.writable import check_writable
        from hudi_ds.services import clean as cleaning

        check_writable(self.config)
        if retain_commits is not None:
            return cleaning.clean(self, retain_commits=retain_commits)
        return cleaning.clean(self, cleaning.CleanPolicy.of(self.options))

    def archive(self, min_commits: int | None = None, max_commits: int | None = None) -> list[str]:
        """Move the oldest instants out of the active timeline once it holds more than `max_commits` commits
        (defaults: the options `hoodie.keep.min.commits` 20 and `hoodie.keep.max.commits` 30)."""
        from hudi_ds.config.writable import check_writable
        from hudi_ds.services import archive as archiving

        check_writable(self.config)
        low = self.options.archive_min_commits if min_commits is None else min_commits
        high = self.options.archive_max_commits if max_commits is None else max_commits
        return archiving.archive(self, min_commits=low, max_commits=high,
                                 compaction_delta_commits=self.options.compaction_delta_commits)

    def rollback(self, instant: str, *, force: bool = False) -> str | None:
        """Roll back a pending instant, or the latest completed commit. A pending instant whose heartbeat is
        fresher than the heartbeat timeout may belong to a live writer: refused unless `force`."""
        from hudi_ds.config.writable import check_timeline_writable
        from hudi_ds.recovery.rollback import require_dead, rollback_completed

        check_timeline_writable(self.config)
        target = normalize_instant_time(instant)
        if not force:
            require_dead(self.storage, self.load_timeline(), target, self.options.heartbeat_timeout_s)
        return rollback_completed(self.storage, self.config, target)

    # ---- table versions ---------------------------------------------------------------------------------
    def upgrade(self, to: int) -> int:
        """Upgrade the table to version `to` (8 or 9) as Apache Hudi 1.x does (docs/compatibility.md): failed
        writes rolled back, a merge-on-read table compacted, the timeline moved into `.hoodie/timeline/` with
        completion times, commit metadata as Avro, the archive as the LSM history, the new properties. A crash
        leaves the table as it was or upgraded; running it again finishes the job.

        Returns:
            The table's version afterwards.
        Raises:
            InstantStateError: a write or compaction is running.
            UnsupportedTableError: the table has a metadata table, or merge settings hudi_ds cannot convert.
        """
        from hudi_ds.upgrade import upgrade as upgrade_table

        self.config = upgrade_table(self.storage, self.config, to, heartbeat_timeout_s=self.options.heartbeat_timeout_s)
        return self.config.version

    def downgrade(self, to: int) -> int:
        """Downgrade the table to version `to` (8 or 6), the reverse of `upgrade`, where nothing the table holds
        needs the newer version (partial updates and merge properties are refused, naming why); the archived
        instants return to the active timeline, which the next archiving moves into the version 6 archive.

        Returns:
            The table's version afterwards.
        Raises:
            InstantStateError: a write or compaction is running.
            UnsupportedTableError: the table uses what only the newer version has.
        """
        from hudi_ds.upgrade import downgrade as downgrade_table

        self.config = downgrade_table(self.storage, self.config, to,
                                      heartbeat_timeout_s=self.options.heartbeat_timeout_s)
        return self.config.version

    def __repr__(self) -> str:
        return f"HudiTable({self.path!r}, {self.config.table_type}, v{self.config.version})"
