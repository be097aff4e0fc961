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
from pyspark.sql.datasource import DataSourceArrowWriter, WriterCommitMessage
from pyspark.sql.types import StructType

from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_shape import new_table_config
from hudi_ds.errors import TableNotFoundError
from hudi_ds.recovery.heartbeat import touch_heartbeat
from hudi_ds.services.post_commit import TableServices
from hudi_ds.spark import types
from hudi_ds.storage import Storage
from hudi_ds.write.changelog import apply_changelog, changelog_column, data_columns
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
from hudi_ds.write.task import TaskWriter

HEARTBEAT_EVERY_S = 30.0


@dataclass(frozen=True)
class HudiCommitMessage(WriterCommitMessage):
    """One per task (empty tasks too): the files the task wrote."""

    result: TaskResult


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
    changelog = changelog_column(opts, incoming, keys, operation, storage.uri)
    data_in = data_columns(incoming, changelog)
    if config is None and operation == "delete_partition":
        raise TableNotFoundError(f"delete_partition: there is no Hudi table at {storage.uri} (no .hoodie/"
                                 "hoodie.properties); check the path")
    if config is None:
        merge_ordering = new_table_config(opts, storage.uri).merge_ordering_field()
        require_columns(data_in, key_columns(opts.record_key, opts.partition_fields, merge_ordering, operation),
                        operation)
        config = create_table(storage, opts)
    hooks = [TableServices(opts, allow_async=allow_async_services, owner=services_owner)]
    client = WriteClient(storage, config, opts, hooks)
    return PreparedSparkWrite(client, client.prepare(operation, data_in), incoming, changelog)


def prepare_writer(opts: HudiOptions, storage: Storage, schema: StructType, overwrite: bool) -> HudiBatchWriter:
    spark_write = prepare_table(opts, storage, schema, overwrite)
    plan = spark_write.client.begin(spark_write.prepared)
    return HudiBatchWriter(spark_write.client, plan, spark_write.input_schema, spark_write.changelog)


def shape_input(rows: pa.Table, plan: WritePlan, input_schema: pa.Schema, changelog_column: str | None) -> pa.Table:
    """A Spark batch as the core writer takes it: Spark's types normalised, changelog rows turned into upserts
    and deletes, deletes given a null ordering value (Hudi's natural delete) when the input has none."""
    table = types.normalize_input(rows, input_schema)
    if changelog_column is not None:
        table = apply_changelog(table, changelog_column)
    ordering = plan.ordering_field
    if plan.operation == "delete" and ordering and ordering not in table.column_names and len(plan.schema):
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


__all__ = ["HudiBatchWriter", "HudiCommitMessage", "PreparedSparkWrite", "prepare_table", "prepare_writer",
           "shape_input"]
