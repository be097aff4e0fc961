"""Hudi's RECORD_INDEX index: a write finds the file groups of its keys in the metadata table's record_index
partition (hudi_ds.metadata.record_index) instead of reading the keys of the table's file slices.

It is global, as Hudi's: a key is one record in the table. Only the record index file groups the incoming keys
hash to are read, so the cost grows with the write, not with the table. A key found there is an update of its file
group; a key found in another partition is updated there, or moves when `hoodie.record.index.update.partition.path`
is true (Hudi's default: false). The index holds no ordering value: with moves on, the file groups holding the
keys found give it, as Hudi's tagging (HoodieIndexUtils.tagGlobalLocationBackToRecords, the same for every global
index) merges an incoming row with the record it would move: a held record that outranks the row stays where it is.
"""

from __future__ import annotations

from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.index.lookup import LIVE, PARTITION, SLOT, KeyLookup, in_order
from hudi_ds.keys.matching import index_in
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
        table = pa.table(columns, schema=self._schema())
        if self.ordering is not None and self.update_partition_path and n:
            return self._with_held_ordering(storage, table, threads)
        return table

    def _with_held_ordering(self, storage: Storage, located: pa.Table, threads: int) -> pa.Table:
        """`located` with the ordering value each key holds in its file group (the highest of its versions, as the
        other global indexes read it), from the latest slices of the groups holding the keys."""
        assert self.ordering is not None
        key = located.column_names[0]
        # the located rows grouped by file group once (a stable sort of one integer per row), not compared with
        # every group in turn
        parts = pc.dictionary_encode(located[PARTITION]).combine_chunks()
        slots = located[SLOT].to_numpy().astype(np.int64)
        codes = parts.indices.to_numpy(zero_copy_only=False).astype(np.int64)
        group = codes * (int(slots.max()) + 1) + slots
        rows = np.argsort(group, kind="stable")
        groups = np.split(rows, np.flatnonzero(np.diff(group[rows])) + 1)
        names = parts.dictionary.to_pylist()
        places = [(names[codes[at[0]]], int(slots[at[0]])) for at in groups]
        values: list[pa.Array] = []
        with ThreadPoolExecutor(min(threads, len(places))) as pool:
            reads = in_order(pool, threads, lambda p: self._slice_keys(storage, self.slices[p[0]][p[1]]), places,
                             2 * threads)
            for at, held in zip(groups, reads, strict=True):
                values.append(pc.take(held[self.ordering.name].combine_chunks(),
                                      index_in(located[key].take(at), held[key])))
        back = np.empty_like(rows)  # each located row's place among the grouped rows
        back[rows] = np.arange(len(rows))
        held_values = pa.concat_arrays([v.cast(self.ordering.type) for v in values]).take(pa.array(back))
        return located.set_column(located.column_names.index(self.ordering.name), self.ordering, held_values)
