"""Streaming sink: every micro-batch is one deltacommit, written by the tasks and completed by the driver.

Exactly-once, whatever crashes when:
- Tasks of one micro-batch share one instant: the first task with rows begins it and publishes the plan
  as `<runId>-<batchId>.plan` in the writer's streaming plan folder (create-if-absent); the others
  read it. A restarted query has a new runId, so a replayed batch gets a fresh instant.
- `commit(messages, batchId)` first rolls back this writer's other pending instants (a crash's leftovers;
  they must be gone before a later commit completes, for hudi-rs), then skips the batch — rolling back its
  files — if the table already records this batch id for this writer (a replay after a crash between the
  table commit and Spark's checkpoint), and otherwise commits with `{identifier: batchId}` under Hudi's
  `_hudi_streaming_sink_checkpoint` key.
- An empty micro-batch (no rows in any task) commits nothing: no instant, no table change.
The commit on the driver is small; table services run after it (inline, or compaction on a background
thread when `compaction.async.enabled=true`).
"""

from __future__ import annotations

import pickle
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
from pyspark.sql.datasource import WriterCommitMessage
from pyspark.sql.types import StructType

from hudi_ds import faults
from hudi_ds.config.options import HudiOptions
from hudi_ds.errors import CommitStateUnknownError
from hudi_ds.recovery.rollback import rollback_pending
from hudi_ds.spark import types
from hudi_ds.spark.batch_writer import prepare_table, shape_input
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import streaming_plan_dir
from hudi_ds.write.checkpoint import checkpoint_metadata, last_committed_batch, pending_instants_of
from hudi_ds.write.messages import TaskResult
from hudi_ds.write.plan import WritePlan
from hudi_ds.write.task import TaskWriter

try:  # pyspark >= 4.1 hands Arrow batches to stream writers
    from pyspark.sql.datasource import DataSourceStreamArrowWriter as _StreamWriterBase

    ARROW_STREAM_WRITER = True
except ImportError:  # pragma: no cover - pyspark 4.0
    from pyspark.sql.datasource import DataSourceStreamWriter as _StreamWriterBase  # type: ignore[assignment]

    ARROW_STREAM_WRITER = False



@dataclass(frozen=True)
class StreamCommitMessage(WriterCommitMessage):
    plan: WritePlan | None
    result: TaskResult | None


def _plan_path(identifier: str, run_id: str, batch_id: int, attempt: int) -> str:
    return f"{streaming_plan_dir(identifier)}/{run_id}-{batch_id}-{attempt:04d}.plan"


class HudiStreamWriter(_StreamWriterBase):  # type: ignore[misc,valid-type]
    """Made on the driver for each micro-batch (twice: tasks' copy and commit copy); holds no instant."""

    def __init__(self, opts: HudiOptions, storage: Storage, schema: StructType) -> None:
        # a streaming query runs once at a time: a compaction its crashed run left is its own to take over
        spark_write = prepare_table(opts, storage, schema, overwrite=False, allow_async_services=True,
                                    services_owner=f"streaming:{opts.streaming_identifier}")
        self.client = spark_write.client
        self.prepared = spark_write.prepared
        self.storage = spark_write.client.storage
        self.config = spark_write.client.config
        self.input_schema = spark_write.input_schema
        self.changelog = spark_write.changelog
        self.identifier = opts.streaming_identifier

    # ---- tasks ---------------------------------------------------------------------------------------
    def _plan_for(self, batch_id: int, run_id: str) -> WritePlan:
        """The plan every task of this micro-batch shares. Plans of the batch whose instant is no longer
        pending (a crashed attempt's, rolled back or even completed) are never reused: the k-th live plan
        is claimed at `<run>-<batch>-<k>.plan`, k counting the stale ones, so racing tasks agree."""
        storage = self.storage
        prefix = f"{run_id}-{batch_id}-"
        entries = sorted(storage.list(streaming_plan_dir(self.identifier)), key=lambda e: e.name)
        # loaded after the listing: a plan's instant exists before its plan file, so every listed plan's instant
        # is on this timeline (loaded before, a racing task's fresh plan looked stale and the two tasks of one
        # micro-batch wrote under two instants: the commit rolled one back, and its rows were lost)
        timeline = self.config.format.load_timeline(storage)
        stale = 0
        for entry in entries:
            if not entry.name.startswith(prefix):
                continue
            plan: WritePlan = pickle.loads(storage.read_bytes(entry.path))
            inst = timeline.find(plan.instant)
            if inst is not None and not inst.is_completed:
                return plan
            stale += 1
        rel = _plan_path(self.identifier, run_id, batch_id, stale)
        plan = self.client.begin(self.prepared, extra=checkpoint_metadata(self.identifier, batch_id))
        if storage.put_if_absent(rel, pickle.dumps(plan)):
            return plan
        rollback_pending(storage, self.config, plan.instant)  # another task won the race: use its instant
        winner: WritePlan = pickle.loads(storage.read_bytes(rel))
        return winner

    def write(self, iterator: Iterator[pa.RecordBatch]) -> StreamCommitMessage:
        from pyspark import TaskContext

        ctx = TaskContext.get()
        batch_id = int(ctx.getLocalProperty("streaming.sql.batchId") or -1) if ctx else -1
        run_id = (ctx.getLocalProperty("sql.streaming.runId") if ctx else None) or "local"
        part, stage, attempt = (ctx.partitionId(), ctx.stageId(), ctx.attemptNumber()) if ctx else (0, 0, 0)
        plan: WritePlan | None = None
        task: TaskWriter | None = None
        try:
            for chunk in types.input_chunks(_as_arrow(iterator, self.input_schema)):
                if plan is None or task is None:
                    plan = self._plan_for(batch_id, run_id)
                    task = TaskWriter(plan, task_id=part, stage_id=stage, attempt=attempt)
                task.write(shape_input(chunk, plan, self.input_schema, self.changelog))
            result = task.finish() if task is not None else None
            if result is not None and result.files:
                faults.pause_point("task_files_written")
            return StreamCommitMessage(plan, result)
        except BaseException:
            if task is not None:
                task.abort()
            raise

    # ---- driver ---------------------------------------------------------------------------------------
    def commit(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        storage = self.storage
        done = [m for m in messages if isinstance(m, StreamCommitMessage) and m.plan is not None]
        plan = done[0].plan if done else None
        if len({m.plan.instant for m in done if m.plan is not None}) > 1:  # never silently drop a task's rows
            raise CommitStateUnknownError(
                f"the tasks of micro-batch {batchId} wrote under different instants; nothing was committed, the "
                "batch is replayed when the query restarts")
        timeline = self.config.format.load_timeline(storage)
        for instant, _ in pending_instants_of(timeline, self.identifier):
            if plan is None or instant != plan.instant:
                rollback_pending(storage, self.config, instant)
        if plan is None:
            return  # an empty micro-batch commits nothing
        results = [m.result for m in done if m.result is not None]

        faults.pause_point("before_commit")
        committed = last_committed_batch(timeline, self.identifier)
        mine = timeline.find(plan.instant)
        if committed is not None and committed >= batchId:
            if mine is not None and not mine.is_completed:
                self.client.abort(plan)  # a replay of a committed batch: change nothing
        else:
            # publishes, then runs the table services (compaction inline or in the background, clean, archive)
            self.client.commit(plan, results, checkpoint_metadata(self.identifier, batchId))
        faults.pause_point("after_commit")
        _forget_plans(storage, self.identifier, batchId)

    def abort(self, messages: list[WriterCommitMessage | None], batchId: int) -> None:
        storage = self.storage
        for m in messages:
            if isinstance(m, StreamCommitMessage) and m.plan is not None:
                rollback_pending(storage, self.config, m.plan.instant)
                break


def _as_arrow(iterator: Iterator[object], schema: pa.Schema) -> Iterator[pa.RecordBatch]:
    """Arrow batches from the Arrow writer, or rows (pyspark 4.0's row writer) batched into Arrow."""
    if ARROW_STREAM_WRITER:
        yield from iterator  # type: ignore[misc]
        return
    rows: list[dict[str, object]] = []
    for row in iterator:
        rows.append(row.asDict(recursive=True))  # type: ignore[attr-defined]
        if len(rows) >= 10_000:
            yield pa.RecordBatch.from_pylist(rows, schema=schema)
            rows = []
    if rows:
        yield pa.RecordBatch.from_pylist(rows, schema=schema)


def _forget_plans(storage: Storage, identifier: str, upto_batch: int) -> None:
    for entry in storage.list(streaming_plan_dir(identifier)):
        try:
            batch = int(entry.name.rsplit("-", 2)[-2])
        except (ValueError, IndexError):
            continue
        if batch <= upto_batch:
            storage.delete(entry.path)
