"""Hudi's BLOOM and GLOBAL_BLOOM indexes (HoodieBloomIndex): tagging reads the keys of only the file slices that
may hold a key the write brings.

A base file's footer names its lowest and highest record key and carries the bloom filter of its keys
(hudi_ds.files.base_file). A slice is read when some incoming key lies in its base file's key range and the filter
says the file might hold it; the keys read then decide exactly (hudi_ds.index.lookup), so a false positive of a
filter costs a read, never a wrong tag. With time-ordered keys, new keys lie above the ranges of the files that
hold older ones, and updates of recent keys meet only the recent files.

Key ranges come from each base file's footer (its key-value metadata, read once per tagging), or, with
`hoodie.bloom.index.use.metadata` on a table whose metadata table has column_stats of the record key meta column,
from those statistics, read once by the driver (as Apache Hudi's HoodieBloomIndex.loadColumnRangesFromMetaIndex; Hudi
reads the statistics of the record key field, which are the key's only where the field is a string): then only
the files whose range holds an incoming key open their footer, for the filter. A file the statistics leave out
is judged by its footer. A file's range is first compared with the incoming keys' lowest and highest.

As in Hudi, the base file speaks for its slice: a lookup index puts new keys into base files only, so the logs
of a slice hold keys of its base file. The slice is read whatever its footer says when it has no base file, when
the footer has no key range nor a filter of Hudi's dynamic type, or when the filter cannot be read. Key ranges are
compared only when both bounds are ASCII: Java orders strings by UTF-16 units, which for some other characters
is not the byte order Arrow compares by (an ASCII bound is on the same side of a key in both orders).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from hudi_ds.config import TableConfig
from hudi_ds.errors import CorruptTableError
from hudi_ds.files.base_file import BLOOM_FILTER_KEY, BLOOM_TYPE_KEY, footer
from hudi_ds.files.view import FileSlice
from hudi_ds.hfile.bloom import TYPE_CODE, FilterBits, KeyPositions
from hudi_ds.index.lookup import KeyLookup, in_order
from hudi_ds.metadata.records import COLUMN_STATS
from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline

MIN_KEY, MAX_KEY = b"hoodie_min_record_key", b"hoodie_max_record_key"
TESTED_KEY_COST = 40  # a key's filter test (~3.6 µs) costs about what reading 40 keys of a file does (2026-11-27)


KeyRange = tuple[str, str]  # a base file's lowest and highest record key


class IncomingKeys:
    """The record keys a write brings, as strings, and their bloom filter positions (hashed once for all files,
    when a filter is first tested)."""

    def __init__(self, wanted: pa.Array | pa.ChunkedArray) -> None:
        keys = pc.drop_null(pc.cast(wanted, pa.string()))  # an integer key column's decimal digits are the keys
        self.keys = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
        self.positions = KeyPositions(self.keys)
        bounds = pc.min_max(self.keys)
        self.lowest, self.highest = bounds["min"].as_py(), bounds["max"].as_py()

    def within(self, key_range: KeyRange) -> np.ndarray:
        """The positions of the keys from `key_range`'s low to its high bound, both included (byte order, as
        Arrow compares strings). A range outside the keys' own is told at once: with time-ordered keys, that of
        most files."""
        low, high = key_range
        if self.lowest is None or high < self.lowest or low > self.highest:
            return np.empty(0, dtype=np.int64)
        inside = pc.and_(pc.greater_equal(self.keys, low), pc.less_equal(self.keys, high))
        return np.flatnonzero(inside.to_numpy(zero_copy_only=False))


@dataclass(frozen=True)
class BloomLookup(KeyLookup):
    """A KeyLookup that, told the keys a write brings, reads only the slices whose base file footer may hold one."""

    prunes_by_keys: ClassVar[bool] = True
    # base file name -> its key range, from the metadata table's column_stats (hoodie.bloom.index.use.metadata)
    key_ranges: Mapping[str, KeyRange] | None = None

    def _probe(self, wanted: pa.Array | pa.ChunkedArray | None) -> object:
        return None if wanted is None else IncomingKeys(wanted)

    def _candidates(self, storage: Storage, partition: str, probe: object,
                    threads: int) -> Iterable[tuple[int, FileSlice]]:
        slices = self.slices.get(partition, ())
        if not isinstance(probe, IncomingKeys):
            return enumerate(slices)

        def may_hold(sl: FileSlice) -> bool:
            return sl.base_file is None or self._may_hold(storage, sl.base_file.path, sl.base_file.name, probe)

        # footers parse and their key-value metadata copy out of the GIL's way: `threads` at a time (80 footers
        # of Hudi's filter size, 2026-11-28: 0.26-0.36 s one by one, 0.16-0.20 s in two threads, a loaded machine;
        # one by one where the write tags partitions beside its file writes, which keep the cores busy)
        with ThreadPoolExecutor(min(threads, max(1, len(slices)))) as pool:
            held = list(in_order(pool, threads, may_hold, slices, 2 * threads))
        return [(slot, sl) for (slot, sl), keep in zip(enumerate(slices), held, strict=True) if keep]

    def _may_hold(self, storage: Storage, path: str, name: str, incoming: IncomingKeys) -> bool:
        """Whether the base file might hold an incoming key; its footer is not read where the metadata table's
        key range says it cannot."""
        known = self.key_ranges.get(name) if self.key_ranges is not None else None
        among = None
        if known is not None and comparable(known):
            among = incoming.within(known)
            if len(among) == 0:
                return False
        return may_hold_any(footer(storage, path), incoming, path, among)


def metadata_key_ranges(storage: Storage, config: TableConfig, timeline: Timeline) -> dict[str, KeyRange] | None:
    """Base file name -> key range, from the column_stats of the record key meta column in the metadata table; None
    when the table has no column_stats partition (or it was dropped since the table's properties were read)."""
    if config.layout_version < 2 or COLUMN_STATS not in config.metadata_partitions:
        return None
    from hudi_ds.metadata.column_stats import read_stats
    from hudi_ds.metadata.layout import MetadataTable, listed_partitions

    try:
        stats = read_stats(MetadataTable.open(storage), COLUMN_STATS, timeline, [RECORD_KEY])
    except CorruptTableError:
        if COLUMN_STATS not in listed_partitions(storage):
            return None
        raise
    ranges = {}
    for name, columns in stats.items():
        key = columns.get(RECORD_KEY)
        low, high = (key.min_value, key.max_value) if key is not None else (None, None)
        if low is not None and high is not None and isinstance(low.value, str) and isinstance(high.value, str):
            ranges[name] = (low.value, high.value)
    return ranges


def comparable(key_range: KeyRange) -> bool:
    """Whether incoming keys may be compared with the bounds in Arrow's byte order (see the module doc)."""
    return key_range[0].isascii() and key_range[1].isascii()


def footer_range(kv: Mapping[bytes, bytes]) -> KeyRange | None:
    """The key range a base file's footer key-value metadata names, if it names one."""
    low, high = kv.get(MIN_KEY), kv.get(MAX_KEY)
    if low is None or high is None:
        return None
    return low.decode("utf-8", "replace"), high.decode("utf-8", "replace")


def may_hold_any(metadata: pq.FileMetaData, incoming: IncomingKeys, what: str,
                 among: np.ndarray | None = None) -> bool:
    """Whether a base file with this footer might hold one of the incoming keys: some key within its key range
    (`among`: the positions of the incoming keys already known to lie in it) that its bloom filter might
    contain. True where the footer cannot tell, and where testing the keys in range would cost more than
    reading the file's keys (a key's test looks up `hash_count` bits per filter row, 30 at Hudi's defaults; a
    read decodes a key per row), which decide anyway."""
    kv = metadata.metadata or {}  # a dict built anew at each access, the filter's text copied: once
    if among is None:
        key_range = footer_range(kv)
        if key_range is not None and comparable(key_range):
            among = incoming.within(key_range)
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
