"""Change data written with the commit (`hoodie.table.cdc.enabled`, Apache Hudi's RFC-51).

With the bucket index a key's previous version lives in its file group's slice, so the group's states before
and after the commit give each key's operation and images. A copy-on-write task that rewrites a base file alone
holds both states already and writes the group's change data itself (`task_change_data`). For every other
existing file group the commit wrote, the coordinator derives them before publishing, after every task's files
are final (shared groups merged, cross-task deletes settled), reading the after-state with the pending instant
counted as committed (`write_change_data`). Either way the rows are written as a CDC block in a `-cdc` log file
beside the group's files (marker first, so a rollback removes it with the rest), and the group's write stat
lists it under `cdcStats`.

New file groups (all inserts), overwrites (deletes of the replaced groups, inserts into new ones) and tables without
a record key write none: a reader infers those changes from the commit's own files as cheaply as it would read
change data.
"""

from __future__ import annotations

from collections.abc import Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds import faults
from hudi_ds.files.markers import write_marker
from hudi_ds.files.naming import cdc_file_name, join
from hudi_ds.log import cdc_block as cdc
from hudi_ds.read.changes import CHANGE_TYPE, feed_schema, pending_changes, states_by_kind
from hudi_ds.read.query import TableSnapshot
from hudi_ds.schema.avro import arrow_to_avro
from hudi_ds.schema.columns import joined
from hudi_ds.schema.meta import COMMIT_TIME, META_COLUMNS, RECORD_KEY
from hudi_ds.schema.strings import constant_strings, decoded
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline
from hudi_ds.write.messages import ChangeDataFile, TaskResult
from hudi_ds.write.plan import WritePlan

_THREADS = 2


def writes_change_data(plan: WritePlan) -> bool:
    config = plan.config
    return config.cdc_enabled and not plan.is_overwrite and bool(config.record_key_fields)


def task_change_data(storage: Storage, plan: WritePlan, group: tuple[str, str], before: pa.Table,
                     after: pa.Table, write_token: str, key: str) -> ChangeDataFile | None:
    """The change data of a file group a task rewrote, from its old and new base rows (meta columns included;
    columns of one value per file may be dictionaries), matched by `key`, the column the rewrite merged by. The
    rows by kind go straight to CDC records, without the change feed's columns in between (nor the other meta
    columns: the sequence numbers are unique strings, costly to filter)."""
    needed = [COMMIT_TIME, RECORD_KEY, *(f.name for f in plan.schema if f.name not in META_COLUMNS)]
    pre, post, inserted, reappeared, deletes = states_by_kind(before.select(needed), after.select(needed),
                                                              plan.instant, key)
    kinds = ChangeKinds(pa.concat_tables([inserted, reappeared]), pre, post, deletes)
    if kinds.empty:
        return None
    rel, size = _write_group(storage, plan, group, plan.instant, write_token, kinds)
    return ChangeDataFile(group[0], group[1], rel, size)


def write_change_data(storage: Storage, plan: WritePlan, results: Sequence[TaskResult], timeline: Timeline,
                      write_token: str, shared: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, int]]:
    """The change data of the commit `plan` is about to publish, per file group its files and sizes: what the
    tasks wrote for groups they rewrote alone, and what the coordinator derives for the other existing groups
    (a task's change data for a group other tasks also wrote, in `shared`, is replaced)."""
    if not writes_change_data(plan):
        return {}
    files: dict[tuple[str, str], dict[str, int]] = {}
    for r in results:
        for c in r.change_data:
            if (c.partition, c.file_id) in shared:
                storage.delete(c.path)
            else:
                files[(c.partition, c.file_id)] = {c.path: c.size}
    existing = {(partition, target.file_id) for (partition, _), target in plan.groups.items()}
    written: dict[tuple[str, str], str] = {}  # group -> the instant its change-data file is named after (its slice)
    for r in results:
        for f in r.files:
            group = (f.partition, f.file_id)
            if group in existing and group not in files:
                written.setdefault(group, f.prev_commit if f.is_log else plan.instant)
    if not written:
        return files
    out = feed_schema(plan.schema)
    changes = pending_changes(TableSnapshot(storage, plan.config, timeline), plan.instant, set(written), out)

    def write_group(group: tuple[str, str]) -> tuple[tuple[str, str], dict[str, int]]:
        rel, size = _write_group(storage, plan, group, written[group], write_token, ChangeKinds.of(changes[group]))
        return group, {rel: size}

    changed = sorted(g for g, rows in changes.items() if rows.num_rows)
    with ThreadPoolExecutor(_THREADS) as pool:  # encoding is column-wise NumPy and Arrow work
        files.update(pool.map(write_group, changed))
    return files


@dataclass(frozen=True)
class ChangeKinds:
    """A file group's change rows by kind, each with the record key and the data columns (more columns may come
    along; one-value columns may be dictionaries)."""

    inserts: pa.Table
    pre_images: pa.Table
    post_images: pa.Table
    deletes: pa.Table

    @classmethod
    def of(cls, changes: pa.Table) -> ChangeKinds:
        """The rows of a change feed (its `_change_type` column) by kind."""
        kind = changes[CHANGE_TYPE]
        return cls(*(changes.filter(pc.equal(kind, k)) for k in ("insert", "update_preimage", "update_postimage",
                                                                "delete")))

    @property
    def empty(self) -> bool:
        return not (self.inserts.num_rows or self.pre_images.num_rows or self.post_images.num_rows
                    or self.deletes.num_rows)


def _write_group(storage: Storage, plan: WritePlan, group: tuple[str, str], slice_instant: str, write_token: str,
                 changes: ChangeKinds) -> tuple[str, int]:
    data = pa.schema([f for f in plan.schema if f.name not in META_COLUMNS])
    mode = plan.config.cdc_mode
    schema = cdc.cdc_schema(mode, arrow_to_avro(data, plan.config.name))
    block = cdc.encode_cdc_block(cdc_records(changes, mode, data, plan.instant), schema, plan.instant)
    return _write_new(storage, plan.instant, group, slice_instant, write_token, block), len(block)


def cdc_records(changes: ChangeKinds, mode: str, data: pa.Schema, instant: str) -> pa.Table:
    """Change rows (one per insert and delete, a pre- and a post-image per update) as CDC records of `mode`:
    one per changed key."""
    pre = _by_key(changes.pre_images)
    post = _by_key(changes.post_images)
    inserts, deletes = changes.inserts, changes.deletes
    ops = pa.chunked_array([constant_strings(cdc.INSERT, inserts.num_rows), constant_strings(cdc.UPDATE, post.num_rows),
                            constant_strings(cdc.DELETE, deletes.num_rows)], pa.string())
    columns: dict[str, pa.Array | pa.ChunkedArray] = {cdc.OP: ops}
    if mode != "DATA_BEFORE_AFTER":
        columns[cdc.RECORD_KEY] = joined([inserts[RECORD_KEY], post[RECORD_KEY], deletes[RECORD_KEY]], pa.string())
    else:
        columns[cdc.TS] = constant_strings(instant, len(ops))
    image = pa.struct(list(data))
    if mode != "OP_KEY_ONLY":
        columns[cdc.BEFORE] = pa.chunked_array([pa.nulls(inserts.num_rows, image), _images(pre, data),
                                                _images(deletes, data)], image)
    if mode == "DATA_BEFORE_AFTER":
        columns[cdc.AFTER] = pa.chunked_array([_images(inserts, data), _images(post, data),
                                               pa.nulls(deletes.num_rows, image)], image)
    return pa.table(columns)


def _by_key(rows: pa.Table) -> pa.Table:
    return rows.take(pc.sort_indices(rows[RECORD_KEY]))


def _images(rows: pa.Table, data: pa.Schema) -> pa.Array:
    arrays = [_plain(rows[f.name], f.type) for f in data]
    return pa.StructArray.from_arrays(arrays, fields=list(data))


def _plain(column: pa.ChunkedArray, target: pa.DataType) -> pa.Array:
    """A column as one array of the table's type (a dictionary a rewrite kept decoded)."""
    if pa.types.is_dictionary(column.type) and not pa.types.is_dictionary(target):
        column = decoded(column, target)
    return column.combine_chunks()


def _write_new(storage: Storage, instant: str, group: tuple[str, str], slice_instant: str, write_token: str,
               payload: bytes) -> str:
    """Create the group's change-data file under a free name (marker first)."""
    partition, file_id = group
    version = 1
    while True:
        rel = join(partition, cdc_file_name(file_id, slice_instant, version, write_token))
        write_marker(storage, instant, rel, "CREATE")
        if storage.put_if_absent(rel, payload):
            faults.file_written()
            return rel
        version += 1
