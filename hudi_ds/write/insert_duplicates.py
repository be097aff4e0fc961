"""Insert-if-absent: Apache Hudi's hoodie.datasource.insert.dup.policy (and its 0.x switch
hoodie.datasource.write.insert.drop.duplicates). An insert drops, or fails on, its rows whose record key the table
already holds, looked up where the table's index looks: in the row's partition, anywhere with a global index (Hudi's
DataSourceUtils.handleDuplicates tags the incoming records with the index and keeps the untagged ones). A key is
held when the table's snapshot has it: a key a delete removed can be inserted again. The rows of one write that
share a key are combined by the merge rule first, as every write's rows are."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import DuplicateKeyError
from hudi_ds.index.lookup import LIVE
from hudi_ds.schema.meta import RECORD_KEY

_NAMED = 5  # keys an error names


def without_held_keys(rows: pa.Table, located: pa.Table, key_field: str, policy: str) -> pa.Table:
    """`rows` without those whose key `located` (KeyLookup.located: the keys the slices hold, LIVE among them)
    holds live; under the fail policy DuplicateKeyError naming them instead."""
    held = pc.filter(located[key_field], located[LIVE])
    if rows.num_rows == 0 or len(held) == 0:
        return rows
    found = pc.is_in(rows[key_field], value_set=held)
    if not pc.any(found).as_py():
        return rows
    if policy == "fail":
        names = rows[RECORD_KEY] if RECORD_KEY in rows.column_names else rows[key_field]
        dup = pc.filter(names, found)
        raise DuplicateKeyError(
            f"hoodie.datasource.insert.dup.policy=fail: {len(dup)} row(s) of this insert have record keys the table "
            f"already holds ({', '.join(map(str, dup.slice(0, _NAMED).to_pylist()))}"
            f"{', ...' if len(dup) > _NAMED else ''}); nothing was written. Leave those rows out, or use "
            "hoodie.datasource.insert.dup.policy=drop to skip them, or upsert them to update the records")
    return rows.filter(pc.invert(found))
