"""Partial update modes within one write: a key's rows folded into one, and a key a global index moves to another
partition merged with the record it leaves (so the new row's missing cells are not lost on the way)."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.index.lookup import PENDING, SLOT
from hudi_ds.keys.matching import index_in
from hudi_ds.merge import LogVersions, merge_slice
from hudi_ds.merge.partial import PartialUpdate
from hudi_ds.read.slice_reader import SliceReader
from hudi_ds.schema.meta import PARTITION_PATH, with_meta
from hudi_ds.storage import Storage
from hudi_ds.write.plan import WritePlan
from hudi_ds.write.routing import DELETE


def fold_partial(rows: pa.Table, ordering: str | None, key_field: str, partial: PartialUpdate | None) -> pa.Table:
    """One row per key, its cells filled from the key's other rows by the partial update mode. The rows fold
    in ordering-value order (ties in arrival order), so each cell ends with the value of the highest-ranked
    row that gives it, whatever order a batch's rows came in."""
    if ordering is not None:
        values = rows[ordering]  # null ordering values first: a valid flag sorts them ahead on any pyarrow
        by = pa.table({"valid": pc.is_valid(values), "value": values})
        rows = rows.take(pc.sort_indices(by, [("valid", "ascending"), ("value", "ascending")]))
    n = rows.num_rows
    return merge_slice(None, LogVersions(rows, np.zeros(n, dtype=np.int64), np.arange(n, dtype=np.int64)),
                       None, ordering, rows.schema, key_field=key_field, partial=partial)


def with_held_cells(rows: pa.Table, plan: WritePlan, storage: Storage) -> pa.Table:
    """Tagged rows whose keys move to another partition under a partial update mode, merged with the records
    they leave: Hudi inserts the merge of both (HoodieIndexUtils.mergeIncomingWithExistingRecord), so the cells
    the new row does not give come from the held record. (A KEEP_VALUES write of some columns is left out.)"""
    lookup = plan.lookup
    assert lookup is not None
    if plan.partial_columns() or DELETE not in rows.column_names:
        return rows
    key = lookup.match_column
    pending = pc.equal(rows[SLOT], PENDING)
    deleting = pc.fill_null(rows[DELETE], False)
    leaving = rows.filter(pc.and_(deleting, pc.invert(pending)))  # tagging's deletes of the moved keys' records
    moving = pc.and_(pc.and_(pending, pc.invert(deleting)), pc.is_in(rows[key], value_set=leaving[key]))
    if not leaving.num_rows or not pc.any(moving).as_py():
        return rows
    arriving = rows.filter(moving)
    leaving = leaving.filter(pc.is_in(leaving[key], value_set=arriving[key]))
    reader = SliceReader(storage, with_meta(plan.schema), plan.ordering_field, lookup.visibility,
                         lookup.virtual_keys is not None, partial=plan.partial,
                         key_fields=lookup.virtual_keys or (), first_value=plan.first_value)
    places = sorted(set(zip(leaving[PARTITION_PATH].to_pylist(), leaving[SLOT].to_pylist(), strict=True)))
    held = pa.concat_tables([reader.read(lookup.slices[partition][slot]) for partition, slot in places])
    at = index_in(arriving[key], held[key].cast(arriving.schema.field(key).type))
    found = pc.is_valid(at)
    before = arriving.filter(found)  # the held records, as rows of this write ranked before the new ones
    at = at.filter(found)
    for name in plan.schema.names:
        if name in before.column_names and name != key:
            i = before.column_names.index(name)
            before = before.set_column(i, before.field(i), pc.take(held[name], at).cast(before.field(i).type))
    ordering = plan.ordering_field if plan.ordering_field in rows.column_names else None
    merged = fold_partial(pa.concat_tables([before, arriving]), ordering, key, plan.partial)
    return pa.concat_tables([rows.filter(pc.invert(moving)), merged.select(rows.column_names).cast(rows.schema)])
