"""The write client: the sequence every writer follows, written once.

open the table (a first Spark write creates it) and check the options against it -> prepare (operation,
required columns, schema evolution) -> begin (roll back crashed writers, claim an instant: a WritePlan) ->
tasks write files -> commit (publish atomically) or abort (roll back) -> post-commit hooks (table services).

`HudiTable.write` runs all of it in one process; Spark spreads it over the driver (open, prepare, begin), the
tasks and the commit process; the streaming sink begins from its first task. The post-commit hooks are handed
in by the caller (hudi_ds.services.post_commit), so the write path does not depend on the services.
"""

from __future__ import annotations

import itertools
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any, Protocol

import pyarrow as pa

from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig, load_config, lost_properties
from hudi_ds.config.table_shape import check_against_table, new_table_config
from hudi_ds.config.writable import check_writable
from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError
from hudi_ds.index.choice import RECORD_INDEX, write_index
from hudi_ds.keys.partition_scheme import timestamp_partitions, with_timestamp_settings
from hudi_ds.metadata import column_stats_sync, partition_stats_sync, secondary_index_sync
from hudi_ds.metadata.bootstrap import apply_metadata_setting, planned_config
from hudi_ds.metadata.record_index_sync import (
    RecordIndexSettings,
    apply_record_index_setting,
    planned_partitions,
)
from hudi_ds.read.query import TableSnapshot
from hudi_ds.recovery.failed_writes import left_behind_note, roll_back_left_behind, rolling_back
from hudi_ds.recovery.rollback import rollback_failed_writes
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import PROPS_PATH
from hudi_ds.upgrade import check_version
from hudi_ds.write import delete_partition
from hudi_ds.write.changelog import apply_changelog, changelog_column, data_columns
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.delete_markers import delete_marker_of, require_boolean_flag
from hudi_ds.write.input import data_schema_of, evolve, iter_tables
from hudi_ds.write.messages import TaskResult
from hudi_ds.write.plan import OPERATIONS, WritePlan, check_operation, default_operation
from hudi_ds.write.task import TaskWriter


class PostCommitHook(Protocol):
    """Runs after each successful commit (compaction, clean, archive); gets the table it committed to."""

    def __call__(self, storage: Storage, config: TableConfig) -> None: ...


@dataclass(frozen=True)
class PreparedWrite:
    """A write validated against the table; nothing begun yet."""

    operation: str
    schema: pa.Schema  # the table's data schema after this write (no meta columns)
    columns: tuple[str, ...] = ()  # the data columns the write carries (a partial update carries some only)


def open_existing(storage: Storage, opts: HudiOptions) -> TableConfig | None:
    """The table's configuration, checked against the table settings `opts` sets; None when there is no table."""
    if not storage.exists(PROPS_PATH):
        return None
    config = load_config(storage)
    check_against_table(opts, config, storage.uri)
    return check_version(storage, opts, config)


def create_table(storage: Storage, opts: HudiOptions) -> TableConfig:
    """Create the table `opts` describes, or open it when it exists (or another writer just created it) with
    the same settings."""
    config = new_table_config(opts, storage.uri)
    if not storage.exists(PROPS_PATH):
        lost_properties(storage)
        # a version that cannot have a metadata table, or an index without one: nothing made
        metadata, record_index = metadata_settings(config, opts)
        partition_stats_sync.planned_config(column_stats_sync.planned_config(
            planned_partitions(planned_config(config, metadata), record_index), opts.column_stats_enable),
            opts.partition_stats_enable)
        try:
            storage.makedirs(config.format.archive_dir)
        except (NotADirectoryError, FileExistsError) as exc:
            raise ConfigError(f"cannot create a table at {storage.uri}: the path (or a folder above it) is a file; "
                              "choose a folder path") from exc
        if storage.put_if_absent(PROPS_PATH, config.to_bytes()):
            config = apply_metadata_setting(storage, config, metadata)
            config = apply_record_index_setting(storage, config, record_index, record_index_settings(opts))
            config = column_stats_sync.apply_setting(storage, config, opts.column_stats_enable)
            return partition_stats_sync.apply_setting(storage, config, opts.partition_stats_enable)
    existing = open_existing(storage, opts)
    assert existing is not None
    return existing


def metadata_settings(config: TableConfig, opts: HudiOptions) -> tuple[bool | None, bool | None]:
    """hoodie.metadata.enable and hoodie.metadata.record.index.enable as the write applies them: the
    RECORD_INDEX index turns both on (it finds keys in the record index), and refuses either set to false."""
    if write_index(config, opts) != RECORD_INDEX:
        return opts.metadata_enable, opts.record_index_enable
    if opts.metadata_enable is False or opts.record_index_enable is False:
        raise ConfigError("hoodie.index.type=RECORD_INDEX finds keys in the metadata table's record index: drop "
                          "hoodie.metadata.enable=false / hoodie.metadata.record.index.enable=false, or write with "
                          "another index")
    return True, True


def record_index_settings(opts: HudiOptions) -> RecordIndexSettings:
    return RecordIndexSettings(opts.record_index_min_file_groups, opts.record_index_max_file_groups,
                               opts.record_index_max_file_group_bytes, opts.record_index_growth_factor)


def resolve_operation(opts: HudiOptions, record_key_fields: Sequence[str], operation: str | None = None,
                      overwrite: bool = False) -> str:
    """The write's operation: given, else the option, else upsert (insert without a record key); an
    overwrite mode turns it into an overwrite; an insert-if-absent policy an upsert into an insert (as Apache Hudi's
    deduceOperation does). Refused when the table cannot do it."""
    if operation is None:
        operation = opts.operation if opts.is_set("operation") else default_operation(record_key_fields)
    operation = operation.lower()
    if operation == "upsert" and opts.duplicate_policy() != "none":
        operation = "insert"
    if overwrite and operation == "delete_partition":
        raise ConfigError("delete_partition replaces the partitions it names and keeps the rest of the table: write "
                          "it with mode('append'); mode('overwrite') would replace the whole table")
    if overwrite:
        operation = "insert_overwrite" if operation == "insert_overwrite" else "insert_overwrite_table"
    if operation not in OPERATIONS:
        raise ConfigError(f"unknown operation {operation!r}; use one of {', '.join(OPERATIONS)}")
    check_operation(operation, record_key_fields)
    return operation


def require_columns(schema: pa.Schema, columns: Iterable[tuple[str, str]], operation: str) -> None:
    for role, col in columns:
        if col not in schema.names:
            raise SchemaError(
                f"{operation}: the {role} column {col!r} is missing from the data; columns: {schema.names}")


def _first_delete_schema(config: TableConfig, data_schema: pa.Schema) -> pa.Schema:
    """The schema a delete records on a table no rows were written to yet: its columns when they include the
    ordering field, else none (empty), as Apache Hudi's writer deletes without a write schema; a schema without
    the ordering field would not be the table's."""
    columns = data_schema_of(data_schema)
    complete = config.ordering_field is None or config.ordering_field in columns.names
    return columns if complete else pa.schema([])


def key_columns(record_key: Sequence[str], partition_fields: Sequence[str], ordering_field: str | None,
                operation: str) -> list[tuple[str, str]]:
    """(role, column) pairs a write must carry; deletes need no ordering value."""
    roles = [("record key", c) for c in record_key] + [("partition", c) for c in partition_fields]
    if ordering_field and operation != "delete":
        roles.append(("ordering (precombine)", ordering_field))
    return roles


class WriteClient:
    """Writes to one table: driver-side steps of every writer. Picklable (Spark ships it to tasks)."""

    def __init__(self, storage: Storage, config: TableConfig, options: HudiOptions | None = None,
                 hooks: Sequence[PostCommitHook] = ()) -> None:
        self.storage = storage
        self.config = config
        self.options = options if options is not None else HudiOptions()
        self.hooks = tuple(hooks)

    def current_schema(self) -> pa.Schema | None:
        """The table's data schema, None before its first commit with data."""
        timeline = self.config.format.load_timeline(self.storage)
        if not timeline.commits():
            return None
        schema = TableSnapshot(self.storage, self.config, timeline).data_schema()
        return schema if schema is not None and len(schema) else None

    def prepare(self, operation: str | None, data_schema: pa.Schema | None, overwrite: bool = False) -> PreparedWrite:
        """Check the write against the table and evolve the schema (`data_schema`: None for an empty write)."""
        operation = resolve_operation(self.options, self.config.record_key_fields, operation, overwrite)
        metadata, record_index = metadata_settings(self.config, self.options)
        check_writable(partition_stats_sync.planned_config(column_stats_sync.planned_config(  # before any change
            planned_partitions(planned_config(self.config, metadata), record_index), self.options.column_stats_enable),
            self.options.partition_stats_enable))
        timestamp_partitions(with_timestamp_settings(self.config, self.options))  # settings it cannot follow
        current = self.current_schema()
        secondary_index_sync.check_columns(self.storage, self.config.metadata_partitions, [current, data_schema])
        known = None if current is None and data_schema is None else \
            {*(current.names if current is not None else ()), *(data_schema.names if data_schema is not None else ())}
        column_stats_sync.apply_column_list(self.storage, self.config, self.options.column_stats_columns,
                                            self.options.column_stats_enable, known)
        self.config = apply_metadata_setting(self.storage, self.config, metadata)
        self.config = apply_record_index_setting(self.storage, self.config, record_index,
                                                 record_index_settings(self.options))
        self.config = column_stats_sync.apply_setting(self.storage, self.config, self.options.column_stats_enable)
        self.config = partition_stats_sync.apply_setting(self.storage, self.config,
                                                         self.options.partition_stats_enable)
        if operation == "delete_partition":
            if current is None:  # Apache Hudi's writer fails too: it records the table's schema, and there is none
                raise InvalidDataError("delete_partition: the table has no commit with rows yet, so there is no "
                                       "partition to delete")
            if data_schema is not None and self.options.partitions_to_delete is None:  # the rows name them
                require_columns(data_schema, [("partition", c) for c in self.config.partition_fields], operation)
            return PreparedWrite(operation, current)  # the table's schema, recorded again as Hudi's writer does
        if data_schema is None:
            return PreparedWrite(operation, current if current is not None else pa.schema([]))
        c = self.config
        require_boolean_flag(data_schema)
        require_columns(data_schema, key_columns(c.record_key_fields, c.partition_fields, c.merge_ordering_field(),
                                                 operation), operation)
        if operation == "delete":
            return PreparedWrite(operation, current if current is not None else _first_delete_schema(c, data_schema))
        return PreparedWrite(operation, evolve(current, data_schema), tuple(data_schema_of(data_schema).names))

    def begin(self, prepared: PreparedWrite, *, extra: dict[str, str] | None = None,
              max_buffer_bytes: int | None = None) -> WritePlan:
        """Roll back writers that crashed (they must be gone before any later commit completes), then claim an
        instant for this write."""
        roll_back_left_behind(self.storage, self.config)
        rollback_failed_writes(self.storage, self.config, timeout_s=self.options.heartbeat_timeout_s)
        plan_options: dict[str, Any] = {"partitions_to_delete": delete_partition.requested(
                                            self.options.partitions_to_delete),
                                        "log_block_format": self.options.log_block_format,
                                        "parquet_compression": self.options.parquet_compression,
                                        "written_columns": prepared.columns,
                                        "delete_marker": delete_marker_of(self.config, self.options)}
        if max_buffer_bytes is not None:
            plan_options["max_buffer_bytes"] = max_buffer_bytes
        return self._coordinator().begin(prepared.operation, prepared.schema, extra=extra, options=self.options,
                                         **plan_options)

    def commit(self, plan: WritePlan, results: Sequence[TaskResult], extra: dict[str, str] | None = None) -> str:
        """Publish the write, then run the post-commit hooks; returns the instant."""
        instant = self._coordinator().commit(plan, results, extra)
        self.run_hooks()
        return instant

    def abort(self, plan: WritePlan) -> None:
        """Roll back the failed write; if the store refuses, the next write rolls it back first."""
        with rolling_back(self.storage, plan.instant):
            self._coordinator().abort(plan)

    def _coordinator(self) -> Coordinator:
        return Coordinator(self.storage, self.config,
                           metadata_compact_every=self.options.metadata_compact_max_delta_commits)

    def run_hooks(self) -> None:
        for hook in self.hooks:
            hook(self.storage, self.config)

    def write(self, data: Any, operation: str | None = None, *, buffer_bytes: int | None = None) -> str:
        """The whole sequence in this process: one atomic commit of `data`; returns its instant."""
        if buffer_bytes is not None and buffer_bytes < 1:
            raise ConfigError(f"buffer_bytes must be a positive number of bytes, got {buffer_bytes!r}")
        # the operation is checked before any input is consumed
        resolved = resolve_operation(self.options, self.config.record_key_fields, operation)
        chunks = iter_tables(data)
        first = next(chunks, None)
        changelog = None if first is None else changelog_column(
            self.options, first.schema, self.config.record_key_fields, resolved, self.storage.uri)
        prepared = self.prepare(operation, data_columns(first.schema, changelog) if first is not None else None)
        plan = self.begin(prepared, max_buffer_bytes=buffer_bytes)
        task = TaskWriter(plan, sole_task=True)
        try:
            for chunk in itertools.chain([first] if first is not None else [], chunks):
                columns = data_columns(chunk.schema, changelog)
                if prepared.operation not in ("delete", "delete_partition") and not evolve(prepared.schema, columns).equals(prepared.schema):
                    raise SchemaError(
                        "a later batch of this write has columns the first batch did not have; pass batches "
                        "with one schema per write"
                    )
                task.write(apply_changelog(chunk, changelog) if changelog is not None else chunk)
            instant = self._coordinator().commit(plan, [task.finish()])
        except BaseException as failure:
            task.abort()
            try:
                self.abort(plan)
            except Exception as error:  # noqa: BLE001 - the write's own error is the one to raise
                failure.add_note(left_behind_note(plan.instant, error))
            raise
        self.run_hooks()  # the commit is durable whatever the services do
        return instant


__all__ = ["PostCommitHook", "PreparedWrite", "WriteClient", "create_table", "key_columns",
           "open_existing", "require_columns", "resolve_operation"]
