"""One key written by two tasks of one merge-on-read write: a delete in one task, a new version in another.

A task folds its own rows per key (the highest ordering value wins, a delete included), but Spark hands rows to
tasks in any order (a `repartition`, a micro-batch that reads two source files after a restart), so two tasks of
one write can each hold a version of a key. Between two data versions the readers' merge picks the higher
ordering value, whatever the order of the log files. A delete is written as Hudi's "no event time" delete (it
removes whatever came before it, see GroupWriteContext.natural_deletes), so against a data version of the same
write the order of the two tasks' log files would decide, and that order is arbitrary.

The coordinator settles it before publishing: for each file group where one task deleted a key that another task
wrote, the version with the highest ordering value wins (on a tie, the later task's, as copy-on-write merges decide), and
one more log file of the same instant, the group's last, holds the winners: the winning rows again, and a
delete for keys the delete won. Every reader folds that file last, so each key ends as the write meant.
"""

from __future__ import annotations

from collections import defaultdict
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.log.blocks import decode_avro_data_block, decode_parquet_data_block
from hudi_ds.log.format import BlockType, read_blocks
from hudi_ds.schema.columns import joined
from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.storage import Storage
from hudi_ds.write.group_writer import GroupWriteContext
from hudi_ds.write.messages import GroupKeys, TaskResult, WrittenFile
from hudi_ds.write.plan import WritePlan

_TASK = "__task"


def settle_cross_task_deletes(storage: Storage, plan: WritePlan, results: list[TaskResult]) -> list[TaskResult]:
    """The results with each contested group settled (merge-on-read writes): log files rewritten without the
    deletes that lost, and one more log file where a delete won."""
    deletes: dict[tuple[str, str], list[tuple[int, GroupKeys]]] = defaultdict(list)
    logs: dict[tuple[str, str], list[tuple[int, WrittenFile]]] = defaultdict(list)
    for r in results:
        for d in r.deletes:
            deletes[(d.partition, d.file_id)].append((r.task_id, d))
        for f in r.files:
            if f.is_log:
                logs[(f.partition, f.file_id)].append((r.task_id, f))
    writers = {g: {t for t, f in files if f.num_writes} for g, files in logs.items()}
    contested = sorted(g for g, dels in deletes.items()
                       if writers.get(g) and len(writers[g] | {t for t, _ in dels}) > 1)
    if not plan.config.is_mor or not contested:
        return results
    token = max(r.task_id for r in results) + 1
    ctx = GroupWriteContext.for_plan(storage, plan, token, f"{token}-0-0")
    replaced: dict[str, WrittenFile | None] = {}
    added: list[WrittenFile] = []
    for group in contested:
        _settle(ctx, plan, deletes[group], logs[group], replaced, added)
    out = [replace(r, files=tuple(n for f in r.files if (n := replaced.get(f.path, f)) is not None))
           for r in results]
    if added:
        out.append(TaskResult(token, tuple(added), tuple(sorted({f.partition for f in added}))))
    return out


def _settle(ctx: GroupWriteContext, plan: WritePlan, group_deletes: list[tuple[int, GroupKeys]],
            files: list[tuple[int, WrittenFile]], replaced: dict[str, WrittenFile | None],
            added: list[WrittenFile]) -> None:
    data = {f.path: _data_rows(ctx, f) for _, f in files}
    rows = pa.concat_tables([data[f.path].append_column(_TASK, pa.array(np.full(data[f.path].num_rows, t, np.int64)))
                             for t, f in files])
    dels = pa.concat_tables([d.table.append_column(_TASK, pa.array(np.full(d.table.num_rows, t, np.int64)))
                             for t, d in group_deletes])
    dels = dels.filter(pc.is_in(dels[RECORD_KEY], value_set=rows[RECORD_KEY]))
    if dels.num_rows == 0:
        return  # the tasks deleted and wrote different keys
    rows = rows.filter(pc.is_in(rows[RECORD_KEY], value_set=dels[RECORD_KEY]))
    ordering = plan.ordering_field if plan.ordering_field in dels.column_names else None
    ord_type = rows.schema.field(ordering).type if ordering else pa.int64()

    def ords(t: pa.Table) -> pa.Array | pa.ChunkedArray:
        return pc.cast(t[ordering], ord_type) if ordering else pa.nulls(t.num_rows, ord_type)

    versions = pa.table({
        "key": joined([rows[RECORD_KEY], dels[RECORD_KEY]], pa.string()),
        "ord": joined([ords(rows), ords(dels)], ord_type),
        _TASK: joined([rows[_TASK], dels[_TASK]], rows.schema.field(_TASK).type),
        "is_delete": pa.array(np.repeat([False, True], [rows.num_rows, dels.num_rows])),
    })
    # each key's versions as one task folds its own: the highest ordering value wins (a missing one is the
    # lowest); between tasks, a tie goes to the later task (Spark partition id), as copy-on-write merges decide
    # (to the earlier one under FirstValueAvroPayload)
    tie = "descending" if plan.first_value else "ascending"
    order = pc.sort_indices(versions, sort_keys=[("key", "ascending", "at_start"), ("ord", "ascending", "at_start"),
                                                 (_TASK, tie, "at_start")])
    ranked = versions.take(order)
    last = pc.not_equal(ranked["key"].slice(0, ranked.num_rows - 1), ranked["key"].slice(1))
    winners = ranked.filter(pa.concat_arrays([pa.chunked_array(last).combine_chunks(), pa.array([True])]))
    deleted = winners.filter(winners["is_delete"])
    # a delete that lost must not act at all: it would also wipe what earlier commits wrote for its key
    won = set(zip(deleted["key"].to_pylist(), deleted[_TASK].to_pylist(), strict=True))
    lost = {(k, t) for k, t in zip(dels[RECORD_KEY].to_pylist(), dels[_TASK].to_pylist(), strict=True)
            if (k, t) not in won}
    for task, d in group_deletes:
        keep = pa.array([(k, task) not in lost for k in d.table[RECORD_KEY].to_pylist()])
        if pc.all(keep).as_py():
            continue
        for f in (f for t, f in files if t == task):
            replaced[f.path] = _rewrite(ctx, f, data[f.path], d.table.filter(keep))
    if deleted.num_rows:  # a delete that won, folded after the rows it beat whatever the files' order
        gone = {RECORD_KEY: deleted["key"]}
        if ordering is not None:
            gone[ordering] = deleted["ord"]
        live = [f for _, f in files if replaced.get(f.path, f) is not None]
        first = live[0] if live else files[0][1]
        version = max([f.log_version for _, f in files] + [f.log_version for f in replaced.values() if f]) + 1
        added.append(ctx.write_log(first.partition, first.file_id, first.bucket, first.prev_commit,
                                   first.base_file, version, None, pa.table(gone)))


def _rewrite(ctx: GroupWriteContext, f: WrittenFile, data: pa.Table, deletes: pa.Table) -> WrittenFile | None:
    """A task's log file again, with only the deletes that still stand (None: nothing is left of it)."""
    new = None
    if data.num_rows or deletes.num_rows:
        new = ctx.write_log(f.partition, f.file_id, f.bucket, f.prev_commit, f.base_file, f.log_version + 1,
                            data if data.num_rows else None, deletes if deletes.num_rows else None)
    ctx.storage.delete(f.path)
    return new


def _data_rows(ctx: GroupWriteContext, f: WrittenFile) -> pa.Table:
    """The rows of one of this write's log files, in the write's full schema."""
    tables = []
    for block in read_blocks(ctx.storage.read_bytes(f.path), f.path):
        if block.block_type == BlockType.AVRO_DATA:
            tables.append(decode_avro_data_block(block, f.path, ctx.schema))
        elif block.block_type == BlockType.PARQUET_DATA:
            tables.append(decode_parquet_data_block(block, f.path, ctx.schema))
    return pa.concat_tables(tables) if tables else ctx.schema.empty_table()
