"""Finding keys among keys: where each incoming record key sits in the keys a file group or partition holds.

Arrow's `index_in` builds a hash table of the held keys on every call; for integer keys (the integer column equal to
the record key, hudi_ds.keys.keygen.integer_key_column) a stable sort and a binary search find the same positions
in a fraction of the time."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc


def _flat(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        return arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    return arr


def index_in(keys: pa.Array | pa.ChunkedArray, held: pa.Array | pa.ChunkedArray) -> pa.Array:
    """The position of each of `keys` in `held` (its first occurrence, as `pyarrow.compute.index_in`), null
    where `held` lacks it."""
    keys, held = _flat(keys), _flat(held)
    if not (pa.types.is_integer(keys.type) and keys.type == held.type and len(held) and len(keys)
            and not keys.null_count and not held.null_count):
        return pc.index_in(keys, value_set=held)
    wanted, values = keys.to_numpy(), held.to_numpy()
    order = np.argsort(values, kind="stable")  # equal keys keep their order: the first occurrence comes first
    ordered = values[order]
    # the keys looked up in their own order: each search starts where the last ended, in memory still cached
    # (25,000 keys among 250,000: 2.2 ms in input order, 0.6 ms sorted, the sort 0.15 ms)
    asked = np.argsort(wanted)
    at = np.minimum(np.searchsorted(ordered, wanted[asked]), len(ordered) - 1)
    found = np.empty(len(wanted), dtype=bool)
    found[asked] = ordered[at] == wanted[asked]
    position = np.empty(len(wanted), dtype=np.int64)
    position[asked] = order[at]
    return pa.array(position, pa.int64(), mask=~found)


# widest range of integer keys looked up through a table of one byte per value (numpy's isin "table" kind), 4 MiB
_TABLE_SPAN = 1 << 22
# the table is filled byte by byte, a hash set key by key: the table pays while the range is within this many
# bytes per key looked up or held (measured: a 2 MiB table for two 3,000-key sets costs more than Arrow's hash set)
_TABLE_BYTES_PER_KEY = 64


def is_in(keys: pa.Array | pa.ChunkedArray, held: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Whether each of `keys` is among `held` (as `pyarrow.compute.is_in`). Integer keys within a few million of
    each other, and not sparse in that range, are looked up in a byte table, several times faster than the hash set
    Arrow builds per call."""
    keys, held = _flat(keys), _flat(held)
    if (pa.types.is_integer(keys.type) and keys.type == held.type and len(held) and len(keys)
            and not keys.null_count and not held.null_count):
        values = held.to_numpy()
        if _fits_table(int(values.max()) - int(values.min()) + 1, len(keys) + len(held)):
            return pa.array(np.isin(keys.to_numpy(), values, kind="table"))
    return pc.is_in(keys, value_set=held)


def all_distinct(column: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a key column's values are distinct. Integers within a few million of each other are marked in a
    byte table: 25,000 keys of a 2M-row upsert's partition 0.1-0.4 ms, Arrow's count of distinct values
    1.6-2.2 ms."""
    if pa.types.is_signed_integer(column.type) and not column.null_count and len(column):
        values = column.to_numpy().astype(np.int64, copy=False)
        low = values.min()
        span = int(values.max()) - int(low) + 1
        if _fits_table(span, len(values)):
            seen = np.zeros(span, dtype=bool)
            seen[values - low] = True
            return int(np.count_nonzero(seen)) == len(values)
        ordered = np.sort(values)  # 25,000 keys over 2M values: 0.15 ms, Arrow's count 1.7 ms
        return not bool(np.any(ordered[1:] == ordered[:-1]))
    return bool(pc.count_distinct(column).as_py() == len(column))


def _fits_table(span: int, keys: int) -> bool:
    """Whether `keys` integer keys over a range of `span` values are cheaper in a byte table than in a hash set."""
    return span <= min(_TABLE_SPAN, _TABLE_BYTES_PER_KEY * keys)
