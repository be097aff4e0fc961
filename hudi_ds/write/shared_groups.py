"""Copy-on-write file groups that several tasks of one write changed: merged into one base file by the coordinator.

Spark hands the writer its partitions as they come, so rows of one bucket may reach several tasks; a
copy-on-write file group must still get exactly one new base file per instant. The first task to claim the
group rewrites its base file as usual (old base ⊕ its rows: the whole write when the input is clustered by
bucket); every other task stages its rows in the instant's temp folder (`stage_rows`). Before
publishing, the coordinator (`merge_shared_groups`) builds the group's single new base file:

- every task's *effect* on the old base is taken alone, the same way whichever task won the claim: the
  claim owner's is read back from its file (rows with this commit time; old keys it no longer holds; the rows the
  old base outranked, which it reports, as stand-ins), the others' from their staged rows (deletes of keys the
  old base holds);
- the effects fold in Spark partition order under the merge rule (highest ordering value wins, ties to the
  later task; a delete replaces what earlier tasks wrote, a later task's row replaces a delete), then meet
  the old base (a row it outranks loses, even after beating another task's delete);
- the result is written with the group writer (marker first), the owner's file is deleted, and the commit
  metadata gets one write stat for the group.
Rows of one key in several tasks are the user's to avoid (docs/semantics.md); they resolve by that rule, never by
dropping a task's rows.
"""

from __future__ import annotations

import io
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field, replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.merge import LogDeletes, LogVersions, merge_slice
from hudi_ds.schema.meta import COMMIT_TIME, META_COLUMNS, RECORD_KEY
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import staged_rows_stem
from hudi_ds.write.group_writer import GroupWriteContext, read_base
from hudi_ds.write.messages import DeferredRows, TaskResult, WrittenFile
from hudi_ds.write.plan import WritePlan

_THREADS = 2
_IPC = pa.ipc.IpcWriteOptions(compression="lz4")


def stage_rows(ctx: GroupWriteContext, partition: str, file_id: str, bucket: int, records: pa.Table,
               deletes: pa.Table | None) -> DeferredRows:
    """Stage a task's rows for a group another task claimed: its records (meta columns filled, so they keep
    this task's sequence numbers) and the keys it deletes."""
    stem = staged_rows_stem(ctx.instant, partition, file_id, ctx.write_token)
    rows_path = deletes_path = None
    if records.num_rows:
        rows_path = _write_ipc(ctx.storage, f"{stem}.rows.arrow", records)
    if deletes is not None and deletes.num_rows:
        deletes_path = _write_ipc(ctx.storage, f"{stem}.deletes.arrow", deletes.select([RECORD_KEY]))
    return DeferredRows(partition, file_id, bucket, rows_path, deletes_path)


def _write_ipc(storage: Storage, rel: str, table: pa.Table) -> str:
    sink = io.BytesIO()
    with pa.ipc.new_file(sink, table.schema, options=_IPC) as writer:
        writer.write_table(table)
    storage.write_bytes(rel, sink.getvalue())
    return rel


def _read_ipc(storage: Storage, rel: str) -> pa.Table:
    return pa.ipc.open_file(pa.py_buffer(storage.read_bytes(rel))).read_all()


@dataclass
class _Group:
    partition: str
    file_id: str
    bucket: int
    owner: tuple[int, WrittenFile] | None = None  # (task, the base file it wrote)
    staged: list[tuple[int, DeferredRows]] = field(default_factory=list)


def merge_shared_groups(storage: Storage, plan: WritePlan, results: list[TaskResult]) -> list[TaskResult]:
    """The task results with each shared group's files replaced by its one merged base file."""
    groups: dict[tuple[str, str], _Group] = {}
    for r in results:
        for d in r.deferred:
            g = groups.setdefault((d.partition, d.file_id), _Group(d.partition, d.file_id, d.bucket))
            g.staged.append((r.task_id, d))
    if not groups:
        return results
    for r in results:
        for f in r.files:
            shared = groups.get((f.partition, f.file_id))
            if shared is not None and not f.is_log:
                shared.owner = (r.task_id, f)
    # a partition id no task of this write reported: the merged file's name is never a task's file's name
    reported = {(d.partition, d.file_id, r.task_id): d.table for r in results for d in r.deletes}
    outranked = {(d.partition, d.file_id, r.task_id): d.table for r in results for d in r.outranked}
    rewritten = {(d.partition, d.file_id, r.task_id): d.table for r in results for d in r.rewritten}
    token = max(r.task_id for r in results) + 1
    ctx = GroupWriteContext.for_plan(storage, plan, token, f"{token}-0-0")
    with ThreadPoolExecutor(_THREADS) as pool:
        merged = list(pool.map(lambda g: _merge(ctx, plan, g, reported, outranked, rewritten), groups.values()))
    replaced = {g.owner[1].path for g in groups.values() if g.owner is not None}
    for rel in sorted(replaced):
        storage.delete(rel)
    out = [replace(r, files=tuple(f for f in r.files if f.path not in replaced), deferred=()) for r in results]
    return [*out, TaskResult(token, tuple(merged), tuple(sorted({f.partition for f in merged})))]


def _merge(ctx: GroupWriteContext, plan: WritePlan, g: _Group, reported: dict[tuple[str, str, int], pa.Table],
           outranked: dict[tuple[str, str, int], pa.Table],
           rewritten: dict[tuple[str, str, int], pa.Table]) -> WrittenFile:
    schema = ctx.schema
    target = None if plan.is_overwrite else plan.groups.get((g.partition, g.bucket))
    base = read_base(ctx.storage, target.base_file, schema, ctx.virtual_keys) \
        if target is not None and target.base_file else None
    base_keys = base[RECORD_KEY] if base is not None else pa.chunked_array([], pa.string())
    # (task, rows it writes, keys it deletes): the deletes with their ordering values when the task reported
    # them (a write of rows and deletes), so that a delete and a row of one key in two tasks meet by ordering
    # value, as within one task; otherwise (a delete write) as keys alone
    effects: list[tuple[int, pa.Table, pa.Table, bool]] = []  # ... and whether the rows are a partial update
    if g.owner is not None:
        task, wf = g.owner
        written = read_base(ctx.storage, wf.path, schema, ctx.virtual_keys)
        beaten = outranked.get((g.partition, g.file_id, task))
        own = rewritten.get((g.partition, g.file_id, task))
        if own is None:
            rows = written.filter(pc.equal(written[COMMIT_TIME], plan.instant))
        else:  # virtual keys: every row of the file reads as this commit's; the task said which are its own
            lost = beaten[RECORD_KEY] if beaten is not None else pa.chunked_array([], pa.string())
            rows = written.filter(pc.and_(pc.is_in(written[RECORD_KEY], value_set=own[RECORD_KEY]),
                                          pc.invert(pc.is_in(written[RECORD_KEY], value_set=lost))))
        if beaten is not None and base is not None:
            rows = pa.concat_tables([rows, _stand_ins(base, beaten, plan.ordering_field, schema)])
        gone = pc.filter(base_keys, pc.invert(pc.is_in(base_keys, value_set=written[RECORD_KEY])))
        effects.append((task, rows, reported.get((g.partition, g.file_id, task), _keys(gone)), False))
    for task, d in g.staged:
        rows = _read_ipc(ctx.storage, d.rows_path) if d.rows_path else schema.empty_table()
        dels = reported.get((g.partition, g.file_id, task))
        if dels is None:
            keys = _read_ipc(ctx.storage, d.deletes_path)[RECORD_KEY] if d.deletes_path else _keys(None)[RECORD_KEY]
            dels = _keys(pc.filter(keys, pc.is_in(keys, value_set=base_keys)))
        effects.append((task, rows, dels, bool(plan.partial_columns())))
    effects.sort(key=lambda e: e[0])
    merged = merge_slice(base, *_as_log(effects, plan, schema), plan.ordering_field, schema, partial=plan.partial,
                         first_value=plan.first_value)
    inserts, updates = _counts(merged, base_keys, plan.instant)
    wf = ctx.write_base(g.partition, g.file_id, g.bucket, merged, target.base_instant if target else "null",
                        inserts, updates, is_merge=target is not None)
    base_rows = base.num_rows if base is not None else 0
    return replace(wf, num_deletes=base_rows - (merged.num_rows - inserts))


def _keys(keys: pa.ChunkedArray | None) -> pa.Table:
    return pa.table({RECORD_KEY: keys if keys is not None else pa.chunked_array([], pa.string())})


def _stand_ins(base: pa.Table, beaten: pa.Table, ordering_field: str | None, schema: pa.Schema) -> pa.Table:
    """For each row the claim owner dropped because the base row outranks it: the base row carrying the dropped
    row's ordering value. It takes the dropped row's place in the write's own merge (it beats a delete of another
    task with a lower ordering value) and, having lost to the base row, never lands in the file."""
    assert ordering_field is not None
    rows = base.filter(pc.is_in(base[RECORD_KEY], value_set=beaten[RECORD_KEY]))
    idx = pc.index_in(rows[RECORD_KEY], value_set=beaten[RECORD_KEY])
    ordering = pc.cast(pc.take(beaten[ordering_field], idx), schema.field(ordering_field).type)
    return rows.set_column(rows.schema.get_field_index(ordering_field), ordering_field, ordering)


def _as_log(effects: list[tuple[int, pa.Table, pa.Table, bool]], plan: WritePlan,
            schema: pa.Schema) -> tuple[LogVersions, LogDeletes]:
    """The effects as log versions of one slice, one rank per task in partition order. A delete with an ordering
    value competes by it (the highest wins, a tie to the later task); one without is natural (always wins over
    what precedes it). The rows of a KEEP_VALUES partial update give the columns the write carries only."""
    tables, ranks, del_keys, del_ords, del_ranks = [], [], [], [], []
    ordering = plan.ordering_field
    ord_type = schema.field(ordering).type if ordering else pa.int64()
    partial_rows = []
    for rank, (_, rows, dels, partial) in enumerate(effects):
        tables.append(rows)
        partial_rows.append(np.full(rows.num_rows, partial))
        ranks.append(np.full(rows.num_rows, rank, dtype=np.int64))
        del_keys.append(dels[RECORD_KEY].combine_chunks().cast(pa.string()))
        del_ords.append(pc.cast(dels[ordering], ord_type).combine_chunks() if ordering in dels.column_names
                        else pa.nulls(dels.num_rows, ord_type))
        del_ranks.append(np.full(dels.num_rows, rank, dtype=np.int64))
    data = pa.concat_tables(tables)
    n = data.num_rows
    keys, ords = pa.concat_arrays(del_keys), pa.concat_arrays(del_ords)
    m = len(keys)
    natural = np.asarray(pc.is_null(ords).to_numpy(zero_copy_only=False), dtype=bool)
    deletes = LogDeletes(keys, ords, natural, np.concatenate(del_ranks), np.arange(n, n + m, dtype=np.int64))
    carried = set(META_COLUMNS) | set(plan.partial_columns())
    is_partial = np.concatenate(partial_rows)
    absent = {c: is_partial for c in schema.names if c not in carried} if is_partial.any() else None
    return LogVersions(data, np.concatenate(ranks), np.arange(n, dtype=np.int64), absent), deletes


def _counts(merged: pa.Table, base_keys: pa.ChunkedArray, instant: str) -> tuple[int, int]:
    """(inserts, updates) among the merged file's rows written by this instant."""
    written = merged.filter(pc.equal(merged[COMMIT_TIME], instant))[RECORD_KEY]
    updates = int(pc.sum(pc.is_in(written, value_set=base_keys)).as_py() or 0)
    return len(written) - updates, updates
