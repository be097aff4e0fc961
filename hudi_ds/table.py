"""HudiTable: the Python API used by notebooks, the CLI and the Spark layer. It only wires the
core together: config and timeline to read, coordinator and task writer to write."""

from __future__ import annotations

import itertools
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa

from hudi_ds.config import TableConfig
from hudi_ds.config.table_config import PROPS_PATH
from hudi_ds.errors import ConfigError, HudiDsError, SchemaError, TableExistsError, TableNotFoundError
from hudi_ds.keys.keygen import key_generator_class
from hudi_ds.read import changes as change_feed
from hudi_ds.read import query
from hudi_ds.services import archive as archiving
from hudi_ds.services import clean as cleaning
from hudi_ds.services import compaction
from hudi_ds.services.rollback import rollback_completed, rollback_failed_writes
from hudi_ds.storage import Storage
from hudi_ds.timeline import Instant, Timeline, normalize_instant_time
from hudi_ds.write.commit import Coordinator, check_timeline_writable, check_writable
from hudi_ds.write.input import data_schema_of, evolve, iter_tables
from hudi_ds.write.plan import OPERATIONS, check_operation, default_operation
from hudi_ds.write.task import TaskWriter

TABLE_TYPES = ("MERGE_ON_READ", "COPY_ON_WRITE")


def _names(value: str | Sequence[str] | None) -> list[str]:
    if value is None:
        return []
    if isinstance(value, str):
        return [v.strip() for v in value.split(",") if v.strip()]
    return [str(v) for v in value]


class HudiTable:
    """An Apache Hudi table on a file system (local path or URI)."""

    def __init__(self, path: str) -> None:
        self.path = str(path)
        self.storage = Storage(self.path)
        try:
            data = self.storage.read_bytes(PROPS_PATH)
        except FileNotFoundError:
            raise TableNotFoundError(
                f"{self.path} is not a Hudi table: {PROPS_PATH} does not exist; create one with "
                "HudiTable.create(path, table_name=..., record_key=...)"
            ) from None
        self.config = TableConfig.parse(data, self.storage.full(PROPS_PATH))

    # ---- creation ---------------------------------------------------------------------------------------
    @classmethod
    def create(
        cls,
        path: str,
        *,
        table_name: str,
        record_key: str | Sequence[str] | None = None,
        ordering_field: str | None = None,
        partition_by: str | Sequence[str] = (),
        table_type: str = "MERGE_ON_READ",
        buckets: int = 4,
        hive_style_partitioning: bool = False,
        url_encode_partitions: bool = False,
    ) -> HudiTable:
        """Create a version-6 table with the bucket index, or open it if it exists with the same settings.

        Without `record_key` the table is key-less (append-only): every row gets a generated key, as in
        Apache Hudi 0.14+, and writes insert, bulk_insert or overwrite."""
        keys, parts = _names(record_key), _names(partition_by)
        table_type = table_type.upper()
        if table_type in ("MOR", "COW"):
            table_type = {"MOR": "MERGE_ON_READ", "COW": "COPY_ON_WRITE"}[table_type]
        if table_type not in TABLE_TYPES:
            raise ConfigError(f"table_type {table_type!r} is not valid; use MERGE_ON_READ or COPY_ON_WRITE")
        if ordering_field and not keys:
            raise ConfigError(
                f"ordering_field {ordering_field!r} needs a record key: rows of a table without one are never "
                "merged; drop ordering_field or set record_key")
        if not isinstance(buckets, int) or buckets < 1:
            raise ConfigError(f"buckets must be a positive integer, got {buckets!r}")
        if not table_name or not table_name.replace("_", "a").isalnum():
            raise ConfigError(f"table_name {table_name!r} must be letters, digits and underscores")
        config = TableConfig(
            name=table_name, table_type=table_type, record_key_fields=keys,  # type: ignore[arg-type]
            ordering_field=ordering_field, partition_fields=parts,
            key_generator=key_generator_class(keys, parts), hive_style=hive_style_partitioning,
            url_encode=url_encode_partitions, num_buckets=buckets, index_type="BUCKET",
            timezone="UTC", database="default",
        )
        storage = Storage(str(path))
        if storage.exists(PROPS_PATH):
            existing = cls(path)
            existing._check_same(config)
            return existing
        storage.makedirs(".hoodie/archived")
        if not storage.put_if_absent(PROPS_PATH, config.to_bytes()):
            existing = cls(path)
            existing._check_same(config)
            return existing
        return cls(path)

    def _check_same(self, wanted: TableConfig) -> None:
        have = self.config
        checks = [
            ("record_key", have.record_key_fields, wanted.record_key_fields),
            ("partition_by", have.partition_fields, wanted.partition_fields),
            ("ordering_field", have.ordering_field, wanted.ordering_field),
            ("table_type", have.table_type, wanted.table_type),
            ("buckets", have.num_buckets, wanted.num_buckets),
            ("table_name", have.name, wanted.name),
            ("hive_style_partitioning", have.hive_style, wanted.hive_style),
        ]
        for name, a, b in checks:
            if a != b:
                raise TableExistsError(
                    f"a table already exists at {self.path} with {name}={a!r}, not {b!r}; open it with "
                    f"HudiTable(path) or choose another path"
                )

    # ---- inspection -------------------------------------------------------------------------------------
    def _timeline(self) -> Timeline:
        return Timeline.load(self.storage, self.config.layout_version, self.config.timeline_path)

    def _snapshot(self) -> query.TableSnapshot:
        return query.TableSnapshot(self.storage, self.config, self._timeline())

    def timeline(self) -> list[Instant]:
        """All instants on the active timeline, oldest first."""
        return list(self._timeline().instants)

    @property
    def schema(self) -> pa.Schema:
        """The data columns (without the _hoodie_* meta columns)."""
        s = self._snapshot().data_schema()
        return s if s is not None else pa.schema([])

    # ---- reads ------------------------------------------------------------------------------------------
    def to_arrow(
        self,
        as_of: str | None = None,
        filters: Sequence[Sequence[Any]] | None = None,
        columns: Sequence[str] | None = None,
        read_optimized: bool = False,
    ) -> pa.Table:
        """Snapshot (or time-travel with `as_of`) read, merged per record key."""
        at = normalize_instant_time(as_of) if as_of is not None else None
        return query.snapshot(self._snapshot(), at, filters, columns, read_optimized)

    def to_batches(
        self,
        as_of: str | None = None,
        filters: Sequence[Sequence[Any]] | None = None,
        columns: Sequence[str] | None = None,
        read_optimized: bool = False,
    ) -> Iterator[pa.RecordBatch]:
        """The snapshot one merged file slice at a time: memory holds one slice, whatever the table size."""
        at = normalize_instant_time(as_of) if as_of is not None else None
        plan = query.plan_snapshot(self._snapshot(), at, filters, columns, read_optimized)
        for sl in plan.slices:
            yield from plan.read_slice(sl).to_batches()

    def to_polars(self, as_of: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                  columns: Sequence[str] | None = None, read_optimized: bool = False) -> Any:
        import polars as pl

        return pl.from_arrow(self.to_arrow(as_of, filters, columns, read_optimized))

    def incremental(self, start: str, end: str | None = None, filters: Sequence[Sequence[Any]] | None = None,
                    columns: Sequence[str] | None = None) -> pa.Table:
        """The latest image of records changed in (start, end]."""
        s = normalize_instant_time(start) if start not in ("0", "000") else "0"
        e = normalize_instant_time(end) if end is not None else None
        return query.incremental(self._snapshot(), s, e, filters, columns)

    def changes(self, start: str, end: str | None = None) -> pa.Table:
        """The change feed of commits in (start, end]: `_change_type` (insert, update_preimage,
        update_postimage, delete) and `_commit_time` per row, in commit order."""
        s = normalize_instant_time(start) if start not in ("0", "000") else "0"
        e = normalize_instant_time(end) if end is not None else None
        return change_feed.changes(self._snapshot(), s, e)

    # ---- writes -----------------------------------------------------------------------------------------
    def write(self, data: Any, operation: str | None = None, *, buffer_bytes: int | None = None) -> str:
        """Write data as one atomic commit; returns the committed instant time.

        `operation` defaults to upsert (insert on a table without a record key). `buffer_bytes` caps the rows
        held in memory before file groups are spilled to local disk (default 256 MiB): an iterable of batches
        of any total size is written in bounded memory."""
        operation = (operation or default_operation(self.config.record_key_fields)).lower()
        if operation not in OPERATIONS:
            raise ConfigError(f"unknown operation {operation!r}; use one of {', '.join(OPERATIONS)}")
        check_operation(operation, self.config.record_key_fields)  # before any input is consumed
        chunks = iter_tables(data)
        first = next(chunks, None)
        current = self.schema if self._timeline().commits() else None
        current = current if current is not None and len(current) else None
        if operation == "delete" or first is None:
            schema = current if current is not None else (data_schema_of(first.schema) if first else pa.schema([]))
        else:
            schema = evolve(current, first.schema)
        rollback_failed_writes(self.storage, self.config)
        coordinator = Coordinator(self.path, self.config)
        plan = (coordinator.begin(operation, schema, max_buffer_bytes=buffer_bytes) if buffer_bytes
                else coordinator.begin(operation, schema))
        task = TaskWriter(plan)
        try:
            for chunk in itertools.chain([first] if first is not None else [], chunks):
                if operation != "delete" and not evolve(schema, chunk.schema).equals(schema):
                    raise SchemaError(
                        "a later batch of this write has columns the first batch did not have; pass batches "
                        "with one schema per write"
                    )
                task.write(chunk)
            result = task.finish()
            return coordinator.commit(plan, [result])
        except BaseException:
            task.abort()
            try:
                coordinator.abort(plan)
            except HudiDsError:
                pass
            raise

    # ---- table services ---------------------------------------------------------------------------------
    def schedule_compaction(self, min_delta_commits: int = 1) -> str | None:
        """Plan a compaction of every file slice with log files, once `min_delta_commits` delta commits
        accumulated since the last one; returns the compaction instant (None: nothing to do now)."""
        check_writable(self.config)
        return compaction.schedule_compaction(self, min_delta_commits=min_delta_commits)

    def run_compaction(self, instant: str | None = None) -> list[str]:
        """Execute pending compaction plans (or one): merged slices become new base files."""
        check_writable(self.config)
        return compaction.run_compaction(self, instant)

    def compact(self, min_delta_commits: int = 1) -> list[str]:
        """Schedule and run a compaction (merge-on-read tables); returns the completed compaction instants."""
        check_writable(self.config)
        return compaction.compact(self, min_delta_commits=min_delta_commits)

    def clean(self, retain_commits: int = 10) -> str | None:
        """Delete file versions no query on the last `retain_commits` commits needs; returns the clean instant."""
        check_writable(self.config)
        return cleaning.clean(self, retain_commits=retain_commits)

    def archive(self, min_commits: int = 20, max_commits: int = 30) -> list[str]:
        """Move the oldest instants out of the active timeline once it holds more than `max_commits` commits."""
        check_writable(self.config)
        return archiving.archive(self, min_commits=min_commits, max_commits=max_commits)

    def rollback(self, instant: str) -> str | None:
        """Roll back a pending instant, or the latest completed commit."""
        check_timeline_writable(self.config)
        return rollback_completed(self.storage, self.config, normalize_instant_time(instant))

    def __repr__(self) -> str:
        return f"HudiTable({self.path!r}, {self.config.table_type}, v{self.config.version})"
