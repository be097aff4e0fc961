"""Hudi's RECORD_INDEX index: a write finds the file groups of its keys in the metadata table's record_index
partition (hudi_ds.metadata.record_index) instead of reading the keys of the table's file slices.

It is global, as Hudi's: a key is one record in the table. Only the record index file groups the incoming keys
hash to are read, so the cost grows with the write, not with the table. A key found there is an update of its file
group; a key found in another partition is updated there, or moves when `hoodie.record.index.update.partition.path`
is true (Hudi's default: false). The index holds no ordering value: with moves on, an incoming row older than
the one held still moves the key, where GLOBAL_SIMPLE would keep the held row (docs/compatibility.md#indexes).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

import numpy as np
import pyarrow as pa

from hudi_ds.index.lookup import LIVE, PARTITION, SLOT, KeyLookup
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.record_index import located
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline


@dataclass(frozen=True)
class RecordIndexLookup(KeyLookup):
    """A KeyLookup that takes the keys' locations from the record index (`data_timeline`: the data table's
    timeline when the write was planned, whose completed instants make the index's valid entries). With an
    `integer_key`, the keys are matched as that column's integers, whose decimal digits the index holds."""

    data_timeline: Timeline | None = None

    def located(self, storage: Storage, partitions: Iterable[str],
                wanted: pa.Array | pa.ChunkedArray | None = None, threads: int = 1) -> pa.Table:
        assert self.data_timeline is not None
        keys = pa.array([], pa.string()) if wanted is None else wanted
        if isinstance(keys, pa.ChunkedArray):
            keys = keys.combine_chunks()
        keys = keys.cast(pa.string())  # an integer key column's decimal digits are the record keys
        found = located(MetadataTable.open(storage), self.data_timeline, keys)
        slots = {p: {sl.file_id: i for i, sl in enumerate(slices)} for p, slices in self.slices.items()}
        # a file group the write no longer sees (replaced) holds nothing to update: slot -1, dropped
        places = found.places.locations
        place_slots = np.array([slots.get(p.partition or "", {}).get(p.file_id, -1) for p in places],
                               dtype=np.int32)
        kept = place_slots[found.codes] >= 0 if places else np.zeros(0, dtype=bool)
        codes = found.codes[kept]
        n = len(codes)
        place_partitions = pa.array([p.partition or "" for p in places], pa.string())
        key_field = self._key_columns().field(0)
        columns: dict[str, pa.Array] = {key_field.name: found.keys.filter(pa.array(kept)).cast(key_field.type)}
        if self.ordering is not None:
            columns[self.ordering.name] = pa.nulls(n, self.ordering.type)
        columns[LIVE] = pa.array(np.ones(n, dtype=bool))
        columns[PARTITION] = place_partitions.take(codes)
        columns[SLOT] = pa.array(place_slots[codes] if places else np.zeros(0, np.int32))
        return pa.table(columns, schema=self._schema())
