"""Hudi's BLOOM and GLOBAL_BLOOM indexes (HoodieBloomIndex): tagging reads the keys of only the file slices that
may hold a key the write brings.

A base file's footer names its lowest and highest record key and carries the bloom filter of its keys
(hudi_ds.files.base_file). A slice is read when some incoming key lies in its base file's key range and the filter
says the file might hold it; the keys read then decide exactly (hudi_ds.index.lookup), so a false positive of a
filter costs a read, never a wrong tag. With time-ordered keys, new keys lie above the ranges of the files that
hold older ones, and updates of recent keys meet only the recent files.

As in Hudi, the base file speaks for its slice: a lookup index puts new keys into base files only, so the logs
of a slice hold keys of its base file. The slice is read whatever its footer says when it has no base file, when
the footer has no key range nor a filter of Hudi's dynamic type, or when the filter cannot be read. Key ranges are
compared only when both bounds are ASCII: Java orders strings by UTF-16 units, which for some other characters
is not the byte order Arrow compares by (an ASCII bound is on the same side of a key in both orders).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ds.errors import CorruptTableError
from hudi_ds.files.base_file import BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, footer
from hudi_ds.files.view import FileSlice
from hudi_ds.hfile.bloom import TYPE_CODE, FilterBits, KeyPositions
from hudi_ds.index.lookup import KeyLookup
from hudi_ds.storage import Storage

MIN_KEY, MAX_KEY = b"hoodie_min_record_key", b"hoodie_max_record_key"
TESTED_KEY_COST = 40  # a key's filter test (~3.6 µs) costs about what reading 40 keys of a file does (2026-11-27)


class IncomingKeys:
    """The record keys a write brings, as strings, and their bloom filter positions (hashed once for all files)."""

    def __init__(self, wanted: pa.Array | pa.ChunkedArray) -> None:
        keys = pc.drop_null(pc.cast(wanted, pa.string()))  # an integer key column's decimal digits are the keys
        self.keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        self.positions = KeyPositions(self.keys)


@dataclass(frozen=True)
class BloomLookup(KeyLookup):
    """A KeyLookup that, told the keys a write brings, reads only the slices whose base file footer may hold one."""

    prunes_by_keys: ClassVar[bool] = True

    def _probe(self, wanted: pa.Array | pa.ChunkedArray | None) -> object:
        return None if wanted is None else IncomingKeys(wanted)

    def _candidates(self, storage: Storage, partition: str, probe: object) -> Iterable[tuple[int, FileSlice]]:
        slices = self.slices.get(partition, ())
        if not isinstance(probe, IncomingKeys):
            return enumerate(slices)
        return [(slot, sl) for slot, sl in enumerate(slices)
                if sl.base_file is None or may_hold_any(footer(storage, sl.base_file.path), probe,
                                                        sl.base_file.path)]


def may_hold_any(metadata: pq.FileMetaData, incoming: IncomingKeys, what: str) -> bool:
    """Whether a base file with this footer might hold one of the incoming keys: some key within its key range
    that its bloom filter might contain. True where the footer cannot tell, and where testing the keys in range
    would cost more than reading the file's keys (a key's test looks up `hash_count` bits per filter row, 30 at
    Hudi's defaults; a read decodes a key per row), which decide anyway."""
    kv = metadata.metadata or {}
    low, high = kv.get(MIN_KEY), kv.get(MAX_KEY)
    among = None
    if low is not None and high is not None and low.isascii() and high.isascii():
        keys = incoming.keys
        inside = pc.and_(pc.greater_equal(keys, low.decode()), pc.less_equal(keys, high.decode()))
        among = np.flatnonzero(inside.to_numpy(zero_copy_only=False))
        if len(among) == 0:
            return False
    text = kv.get(BLOOM_FILTER_KEY.encode())
    if text is None or kv.get(BLOOM_TYPE_KEY.encode()) != TYPE_CODE.encode():
        return True
    tested = len(incoming.keys) if among is None else len(among)
    if tested * TESTED_KEY_COST > metadata.num_rows:
        return True
    try:
        return bool(FilterBits.read(text, what).might_contain(incoming.positions, among).any())
    except CorruptTableError:
        return True  # the keys decide
