"""Tagging: the file group (slot) each incoming row of a write with a lookup index (SIMPLE, BLOOM, GLOBAL_*) goes to
(hudi_ds.index.lookup finds the keys the table holds)."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.index.lookup import LIVE, PARTITION, PENDING, SLOT, KeyLookup
from hudi_ds.keys.matching import index_in
from hudi_ds.schema.meta import PARTITION_PATH, RECORD_KEY
from hudi_ds.schema.strings import constant_strings
from hudi_ds.write.messages import TaskResult
from hudi_ds.write.routing import DELETE


def tag(rows: pa.Table, located: pa.Table, lookup: KeyLookup) -> pa.Table:
    """`rows` (record key, partition path and, for deletes, the delete flag) with the slot of the file group each
    goes to (PENDING: an insert), deletes of keys no slice holds dropped. With a global index a key held in another
    partition is written there (hoodie.simple.index.update.partition.path=false, or when the held row outranks
    the new one: the merge keeps it), or moves: deleted there, inserted here; with moves on, a key whose every copy a
    log deleted is inserted (Hudi finds no record to merge with)."""
    n = rows.num_rows
    key = lookup.match_column
    idx = index_in(rows[key], located[key])
    found = pc.is_valid(idx).to_numpy(zero_copy_only=False)
    slot = np.full(n, PENDING, dtype=np.int32)
    safe = pc.fill_null(idx, 0)
    if lookup.global_index and lookup.update_partition_path and located.num_rows and found.any():
        # Hudi merges the row with the key's record before placing it (mergeForPartitionUpdatesIfNeeded): a key
        # only a log's delete holds (located puts live copies first) has no record, so the row is an insert
        found &= pc.take(located[LIVE], safe).to_numpy(zero_copy_only=False)
    if located.num_rows:
        slot[found] = pc.take(located[SLOT], safe).to_numpy(zero_copy_only=False)[found]
    deleting = (pc.fill_null(rows[DELETE], False).to_numpy(zero_copy_only=False)
                if DELETE in rows.column_names else np.zeros(n, dtype=bool))
    moved_out: pa.Table | None = None
    if lookup.global_index and located.num_rows and found.any():
        held_in = pc.take(located[PARTITION], safe)
        elsewhere = found & ~pc.equal(held_in, rows[PARTITION_PATH]).to_numpy(zero_copy_only=False)
        stays = elsewhere & (deleting | (not lookup.update_partition_path))
        if lookup.ordering is not None and lookup.ordering.name in rows.column_names:
            held = pc.take(located[lookup.ordering.name], safe)
            below = pc.less_equal if lookup.first_value else pc.less
            outranked = pc.fill_null(below(rows[lookup.ordering.name], held), False).to_numpy(zero_copy_only=False)
            stays |= elsewhere & outranked
        moves = elsewhere & ~stays
        if stays.any() or moves.any():
            partitions = pc.if_else(pa.array(stays), held_in, rows[PARTITION_PATH])
            if moves.any():
                out = rows.filter(pa.array(moves))
                out = out.set_column(out.column_names.index(PARTITION_PATH), PARTITION_PATH,
                                     pc.take(held_in, pa.array(np.flatnonzero(moves))))
                flag = pa.array(np.ones(out.num_rows, dtype=bool))
                out = (out.set_column(out.column_names.index(DELETE), DELETE, flag) if DELETE in out.column_names
                       else out.append_column(DELETE, flag))
                moved_out = out.append_column(SLOT, pa.array(slot[moves]))
                slot[moves] = PENDING
            rows = rows.set_column(rows.column_names.index(PARTITION_PATH), PARTITION_PATH, partitions)
    keep = found | ~deleting
    tagged = rows.append_column(SLOT, pa.array(slot))
    if not keep.all():  # else no copy of every row
        tagged = tagged.filter(pa.array(keep))
    if moved_out is None:
        return tagged
    if DELETE not in tagged.column_names:
        tagged = tagged.append_column(DELETE, pa.array(np.zeros(tagged.num_rows, dtype=bool)))
    return pa.concat_tables([tagged, moved_out.select(tagged.column_names).cast(tagged.schema)])


def keys_new_in_several_tasks(results: Sequence[TaskResult], global_index: bool) -> list[str]:
    """Keys that several tasks of one write inserted (into one partition; anywhere, global indexes): each task
    places its own inserts, so such a key would be in two file groups. Spark hands a write its partitions as they
    are, and the bucket index sends a key's rows to one file group whatever the task; a lookup index cannot."""
    placed = [(k.partition if not global_index else "", r.task_id, k.table) for r in results for k in r.inserted]
    if len({task for _, task, _ in placed}) < 2:
        return []
    keys = pa.table({
        "scope": pa.concat_arrays([constant_strings(p, t.num_rows) for p, _, t in placed]),
        "task": pa.concat_arrays([pa.array(np.full(t.num_rows, task, dtype=np.int64)) for _, task, t in placed]),
        "key": pa.concat_arrays([t[RECORD_KEY].combine_chunks() for _, _, t in placed]),
    })
    counted = keys.group_by(["scope", "key"]).aggregate([("task", "count_distinct")])
    return counted.filter(pc.greater(counted["task_count_distinct"], 1))["key"].to_pylist()
