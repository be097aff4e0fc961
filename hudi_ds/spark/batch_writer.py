"""Batch writes: the write client's sequence (hudi_ds.write.client) spread over Spark's driver and executors.

writer() (driver):  open or create the table, prepare (operation, columns, schema), begin -> a WritePlan,
                    pickled inside the writer to every task.
write() (executor): a TaskWriter per task fed with every Arrow batch; its TaskResult is the commit message.
commit() (driver, another process): the client's commit (drops files of failed task attempts, merges
                    copy-on-write file groups several tasks changed, publishes), then the table services inline.
abort() (driver):   the client's abort rolls back everything the instant wrote (markers).
"""

from __future__ import annotations

import time
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from hudi_ds.config.options import HudiOptions
from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError
from hudi_ds.read.changes import CHANGE_COMMIT_TIME
from hudi_ds.recovery.heartbeat import touch_heartbeat
from hudi_ds.services.post_commit import TableServices
from hudi_ds.spark import types
from hudi_ds.storage import Storage
from hudi_ds.write.client import (
    PreparedWrite,
    WriteClient,
    create_table,
    key_columns,
    open_existing,
    require_columns,
    resolve_operation,
)
from hudi_ds.write.messages import TaskResult
from hudi_ds.write.plan import WritePlan
from hudi_ds.write.routing import DELETE
from hudi_ds.write.task import TaskWriter

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


@dataclass(frozen=True)
class PreparedSparkWrite:
    """A Spark write validated on the driver: the table exists and agrees with the options; nothing begun yet."""

    client: WriteClient
    prepared: PreparedWrite
    input_schema: pa.Schema  # Arrow schema of the incoming Spark batches
    changelog: str | None  # change-kind column of changelog input


def prepare_table(opts: HudiOptions, storage: Storage, schema: StructType, overwrite: bool, *,
                  allow_async_services: bool = False, services_owner: str | None = None) -> PreparedSparkWrite:
    """Open the table (a first write creates it: without a record key option a key-less one, as Apache Hudi 0.14+
    does) and prepare the write with the write client; shared by batch writes and the streaming sink."""
    config = open_existing(storage, opts)
    keys = config.record_key_fields if config is not None else opts.record_key
    operation = resolve_operation(opts, keys, overwrite=overwrite)
    incoming = types.arrow_schema(schema)
    changelog = _changelog_column(opts, incoming)
    if changelog is not None and not keys:
        raise ConfigError(f"changelog input updates and deletes records by key, but the table at {storage.uri} has no "
                          "record key; drop the changelog option or write to a table created with a record key")
    if changelog is not None and operation != "upsert":
        raise ConfigError(f"changelog input is written as upserts and deletes; it cannot be used with "
                          f"operation {operation!r} (drop hoodie.datasource.write.operation or set it to upsert)")
    data_in = pa.schema([f for f in incoming if f.name not in (changelog, CHANGE_COMMIT_TIME)]) if changelog \
        else incoming
    if config is None:
        require_columns(data_in, key_columns(opts.record_key, opts.partition_fields, opts.ordering_field, operation),
                        operation)
        config = create_table(storage, opts)
    hooks = [TableServices(opts, allow_async=allow_async_services, owner=services_owner)]
    client = WriteClient(storage, config, opts, hooks)
    return PreparedSparkWrite(client, client.prepare(operation, data_in), incoming, changelog)


def prepare_writer(opts: HudiOptions, storage: Storage, schema: StructType, overwrite: bool) -> HudiBatchWriter:
    spark_write = prepare_table(opts, storage, schema, overwrite)
    plan = spark_write.client.begin(spark_write.prepared)
    return HudiBatchWriter(spark_write.client, plan, spark_write.input_schema, spark_write.changelog)


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
    if CHANGE_COMMIT_TIME in table.column_names:
        # a hudi-py change feed: apply each key's changes in commit order (ties resolve to the later row)
        order = pc.sort_indices(table, sort_keys=[(CHANGE_COMMIT_TIME, "ascending")])
        table = table.take(order).drop_columns([CHANGE_COMMIT_TIME])
    return table


def shape_input(rows: pa.Table, plan: WritePlan, input_schema: pa.Schema, changelog_column: str | None) -> pa.Table:
    """A Spark batch as the core writer takes it: Spark's types normalised, changelog rows turned into upserts
    and deletes, deletes given a null ordering value (Hudi's natural delete) when the input has none."""
    table = types.normalize_input(rows, input_schema)
    if changelog_column is not None:
        table = apply_changelog(table, changelog_column)
    ordering = plan.config.ordering_field
    if plan.operation == "delete" and ordering and ordering not in table.column_names:
        table = table.append_column(ordering, pa.nulls(table.num_rows, plan.schema.field(ordering).type))
    return table


class HudiBatchWriter(DataSourceArrowWriter):
    """Pickled to every task and to the commit process; holds only the plan and input shape."""

    def __init__(self, client: WriteClient, plan: WritePlan, input_schema: pa.Schema,
                 changelog_column: str | None) -> None:
        self.client = client
        self.plan = plan
        self.input_schema = input_schema
        self.changelog_column = changelog_column

    def write(self, iterator: Iterator[pa.RecordBatch]) -> HudiCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        task_id, stage, attempt = (ctx.partitionId(), ctx.stageId(), ctx.attemptNumber()) if ctx else (0, 0, 0)
        task = TaskWriter(self.plan, task_id=task_id, stage_id=stage, attempt=attempt)
        self._heartbeat()  # a job of many short tasks keeps the instant alive too
        last_beat = time.monotonic()
        try:
            for chunk in types.input_chunks(iterator):
                task.write(shape_input(chunk, self.plan, self.input_schema, self.changelog_column))
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
        touch_heartbeat(self.plan.storage, self.plan.instant)

    def commit(self, messages: list[WriterCommitMessage | None]) -> None:
        results = [m.result for m in messages if isinstance(m, HudiCommitMessage)]
        self.client.commit(self.plan, results)

    def abort(self, messages: list[WriterCommitMessage | None]) -> None:
        self.client.abort(self.plan)


__all__ = ["HudiBatchWriter", "HudiCommitMessage", "PreparedSparkWrite", "apply_changelog", "prepare_table",
           "prepare_writer", "shape_input"]
