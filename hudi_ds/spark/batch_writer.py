"""Batch writes: HudiTable.write's sequence spread over Spark's driver and executors.

writer() (driver):  validate options, create or check the table, evolve the schema, roll back crashed writers,
                    Coordinator.begin -> a WritePlan, pickled inside the writer to every task.
write() (executor): a TaskWriter per task fed with every Arrow batch; its TaskResult is the commit message.
commit() (driver, another process): Coordinator.commit (drops files of failed task attempts, merges copy-on-write
                    file groups several tasks changed, publishes).
abort() (driver):   Coordinator.abort rolls back everything the instant wrote (markers).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from hudi_ds.config import TableConfig
from hudi_ds.config.table_config import PROPS_PATH
from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError
from hudi_ds.services.rollback import rollback_failed_writes, touch_heartbeat
from hudi_ds.spark import types
from hudi_ds.spark.options import HudiOptions, default_table_name
from hudi_ds.storage import Storage
from hudi_ds.write.commit import Coordinator, check_writable
from hudi_ds.write.input import data_schema_of, evolve
from hudi_ds.write.messages import TaskResult
from hudi_ds.write.plan import WritePlan, check_operation, default_operation
from hudi_ds.write.routing import DELETE
from hudi_ds.write.task import TaskWriter

COMMIT_TIME = "_commit_time"  # the change feed's commit column: orders changes, never stored
UPSERT_KINDS = ("insert", "update_postimage", "c", "r", "u", "+i", "+u")
PRE_IMAGE_KINDS = ("update_preimage", "-u")
DELETE_KINDS = ("delete", "d", "-d")
HEARTBEAT_EVERY_S = 30.0


@dataclass(frozen=True)
class HudiCommitMessage(WriterCommitMessage):
    """One per task (empty tasks too): the files the task wrote."""

    result: TaskResult


def _changelog_column(opts: HudiOptions, incoming: pa.Schema) -> str | None:
    col = opts.changelog_column
    if col is None and opts.changelog_enabled:
        col = next((c for c in ("_change_type", "op") if c in incoming.names), None)
        if col is None:
            raise ConfigError(
                "changelog.enabled=true but the data has neither a '_change_type' nor an 'op' column; name the "
                "change-kind column with hoodie.datasource.write.changelog.column")
    if col is not None and col not in incoming.names:
        raise SchemaError(
            f"hoodie.datasource.write.changelog.column={col!r} is not a column of the data; columns: "
            f"{incoming.names}")
    return col


def _check_against_table(opts: HudiOptions, config: TableConfig, path: str) -> None:
    """Settings given for an existing table must match it: name both values."""
    checks = [
        ("record_key", "hoodie.datasource.write.recordkey.field", opts.record_key, config.record_key_fields),
        ("partition_fields", "hoodie.datasource.write.partitionpath.field", opts.partition_fields,
         config.partition_fields),
        ("table_type", "hoodie.datasource.write.table.type", opts.table_type, config.table_type),
        ("num_buckets", "hoodie.bucket.index.num.buckets", opts.num_buckets, config.num_buckets),
        ("ordering_field", "hoodie.datasource.write.precombine.field", opts.ordering_field, config.ordering_field),
        ("hive_style", "hoodie.datasource.write.hive_style_partitioning", opts.hive_style, config.hive_style),
        ("url_encode", "hoodie.datasource.write.partitionpath.urlencode", opts.url_encode, config.url_encode),
        ("table_name", "hoodie.table.name", opts.table_name, config.name),
    ]
    if opts.record_key and not config.record_key_fields:
        raise ConfigError(
            f"hoodie.datasource.write.recordkey.field={','.join(opts.record_key)!r} but the existing table at {path} "
            "has no record key (its rows get generated keys; the key is fixed when a table is created); drop the "
            "option, or write to a new table to get one with a record key")
    for name, key, given, have in checks:
        if opts.is_set(name) and given != have:
            show = (lambda v: ",".join(v) if isinstance(v, list) else v)  # noqa: E731
            raise ConfigError(
                f"{key}={show(given)!r} contradicts the existing table at {path}, which has {show(have)!r}; "
                f"drop the option or set it to {show(have)!r} (these settings are fixed when a table is created)")


def _require(schema: pa.Schema, columns: list[tuple[str, str]], operation: str) -> None:
    for role, col in columns:
        if col not in schema.names:
            raise SchemaError(
                f"{operation}: the {role} column {col!r} is missing from the DataFrame; columns: {schema.names}")


@dataclass(frozen=True)
class PreparedWrite:
    """A write validated on the driver: the table exists and agrees with the options; nothing begun yet."""

    path: str
    config: TableConfig
    operation: str
    new_schema: pa.Schema  # table data schema after this write
    input_schema: pa.Schema  # Arrow schema of the incoming Spark batches
    changelog: str | None  # change-kind column of changelog input


def prepare_table(opts: HudiOptions, schema: StructType, overwrite: bool) -> PreparedWrite:
    """Validate options, create the table if missing (or check it), evolve the schema (shared with streaming).

    Without a record key option a new table is created key-less (append-only, generated keys), as Apache Hudi
    0.14+ does; the default operation is then insert."""
    from hudi_ds.table import HudiTable

    path = opts.path
    if not path:
        raise ConfigError("no table path: call .save(path) (or set option 'path')")
    table = HudiTable(path) if Storage(path).exists(PROPS_PATH) else None
    if table is not None:
        _check_against_table(opts, table.config, path)
    keys = table.config.record_key_fields if table is not None else opts.record_key
    operation = opts.operation if opts.is_set("operation") else default_operation(keys)
    if overwrite:
        operation = "insert_overwrite" if operation == "insert_overwrite" else "insert_overwrite_table"
    incoming = types.arrow_schema(schema)
    changelog = _changelog_column(opts, incoming)
    if changelog is not None and not keys:
        raise ConfigError(f"changelog input updates and deletes records by key, but the table at {path} has no "
                          "record key; drop the changelog option or write to a table created with a record key")
    if changelog is not None and operation != "upsert":
        raise ConfigError(f"changelog input is written as upserts and deletes; it cannot be used with "
                          f"operation {operation!r} (drop hoodie.datasource.write.operation or set it to upsert)")
    check_operation(operation, keys)
    data_in = pa.schema([f for f in incoming if f.name not in (changelog, COMMIT_TIME)]) if changelog \
        else incoming
    if table is None:
        roles = [("record key", c) for c in opts.record_key] + [("partition", c) for c in opts.partition_fields]
        if opts.ordering_field:
            roles.append(("ordering (precombine)", opts.ordering_field))
        _require(data_in, roles, operation)
        table = HudiTable.create(
            path, table_name=opts.table_name or default_table_name(path), record_key=opts.record_key,
            ordering_field=opts.ordering_field, partition_by=opts.partition_fields, table_type=opts.table_type,
            buckets=opts.num_buckets, hive_style_partitioning=opts.hive_style, url_encode_partitions=opts.url_encode)
    config = table.config
    check_writable(config)
    roles = [("record key", c) for c in config.record_key_fields] + [("partition", c) for c in config.partition_fields]
    if config.ordering_field and operation != "delete":
        roles.append(("ordering (precombine)", config.ordering_field))
    _require(data_in, roles, operation)
    current = table.schema if table.timeline() and len(table.schema) else None
    if operation == "delete":
        new_schema = current if current is not None else data_schema_of(data_in)
    else:
        new_schema = evolve(current, data_in)
    return PreparedWrite(path, config, operation, new_schema, incoming, changelog)


def prepare_writer(opts: HudiOptions, schema: StructType, overwrite: bool) -> HudiBatchWriter:
    prepared = prepare_table(opts, schema, overwrite)
    rollback_failed_writes(Storage(prepared.path), prepared.config)
    plan = Coordinator(prepared.path, prepared.config).begin(
        prepared.operation, prepared.new_schema, log_block_format=opts.log_block_format,
        parquet_compression=opts.parquet_compression)
    return HudiBatchWriter(plan, prepared.input_schema, prepared.changelog)


def apply_changelog(table: pa.Table, column: str) -> pa.Table:
    """Rows of a change feed as upserts plus rows marked in a boolean `__delete` column; pre-images dropped."""
    kinds = pc.utf8_lower(pc.cast(table[column], pa.string()))
    known = UPSERT_KINDS + PRE_IMAGE_KINDS + DELETE_KINDS
    bad = pc.invert(pc.fill_null(pc.is_in(kinds, value_set=pa.array(known)), False))
    if pc.any(bad).as_py():
        sample = pc.unique(pc.filter(table[column], bad)).to_pylist()[:5]
        raise InvalidDataError(
            f"changelog column {column!r} holds unknown change kinds {sample}; expected one of {list(known)} "
            "(Spark CDF _change_type, Debezium op, Flink row kind)")
    keep = pc.invert(pc.is_in(kinds, value_set=pa.array(PRE_IMAGE_KINDS)))
    table = table.filter(keep)
    kinds = kinds.filter(keep)
    is_delete = pc.is_in(kinds, value_set=pa.array(DELETE_KINDS))
    table = table.drop_columns([column]).append_column(DELETE, is_delete)
    if COMMIT_TIME in table.column_names:
        # a hudi-py change feed: apply each key's changes in commit order (ties resolve to the later row)
        order = pc.sort_indices(table, sort_keys=[(COMMIT_TIME, "ascending")])
        table = table.take(order).drop_columns([COMMIT_TIME])
    return table


class HudiBatchWriter(DataSourceArrowWriter):
    """Pickled to every task and to the commit process; holds only the plan and input shape."""

    def __init__(self, plan: WritePlan, input_schema: pa.Schema, changelog_column: str | None) -> None:
        self.plan = plan
        self.input_schema = input_schema
        self.changelog_column = changelog_column

    def _prepare(self, rows: pa.Table) -> pa.Table:
        table = types.normalize_input(rows, self.input_schema)
        if self.changelog_column is not None:
            table = apply_changelog(table, self.changelog_column)
        ordering = self.plan.config.ordering_field
        if self.plan.operation == "delete" and ordering and ordering not in table.column_names:
            # deletes without an ordering value always delete (Hudi's natural delete)
            table = table.append_column(ordering, pa.nulls(table.num_rows, self.plan.schema.field(ordering).type))
        return table

    def write(self, iterator: Iterator[pa.RecordBatch]) -> HudiCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task_id, stage, attempt = (ctx.partitionId(), ctx.stageId(), ctx.attemptNumber()) if ctx else (0, 0, 0)
        task = TaskWriter(self.plan, task_id=task_id, stage_id=stage, attempt=attempt)
        self._heartbeat()  # a job of many short tasks keeps the instant alive too
        last_beat = time.monotonic()
        try:
            for chunk in types.input_chunks(iterator):
                task.write(self._prepare(chunk))
                if time.monotonic() - last_beat > HEARTBEAT_EVERY_S:
                    self._heartbeat()
                    last_beat = time.monotonic()
            result = task.finish()
        except BaseException:
            task.abort()
            raise
        return HudiCommitMessage(result)

    def _heartbeat(self) -> None:
        """Keep the instant alive for other writers' rollback of crashed writes (long tasks)."""
        touch_heartbeat(Storage(self.plan.base_uri), self.plan.instant)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        results = [m.result for m in messages if isinstance(m, HudiCommitMessage)]
        Coordinator(self.plan.base_uri, self.plan.config).commit(self.plan, results)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        Coordinator(self.plan.base_uri, self.plan.config).abort(self.plan)


__all__ = ["HudiBatchWriter", "HudiCommitMessage", "PreparedWrite", "apply_changelog", "prepare_table",
           "prepare_writer"]
