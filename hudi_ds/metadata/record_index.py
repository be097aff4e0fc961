"""The metadata table's `record_index` partition: record key -> (data partition, file group), as Apache Hudi 1.x
lays it out (HoodieTableMetadataUtil, HoodieMetadataPayload's record index records).

The partition holds a fixed number of file groups, `record-index-0000-0` ... `record-index-NNNN-0`, chosen when it is
created; a key lives in the file group its Java `String.hashCode` picks (HoodieTableMetadataUtil
.mapRecordKeyToFileGroupIndex: `abs(hashCode) % count`), so a lookup reads only the file groups of its keys. Each
file group is a metadata file slice like the `files` partition's (an HFile base file sorted by key, then log blocks:
HFile data blocks of locations, DELETE blocks of removed keys), merged newest over oldest.
"""

from __future__ import annotations

import functools
import re
import uuid
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.log import BlockType, decode_delete_block, read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block
from hudi_ds.metadata import record_index_codec as codec
from hudi_ds.metadata import records as md
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import MetadataSlice, files_slice, read_slice_files
from hudi_ds.storage import FileEntry
from hudi_ds.timeline import Timeline

FILE_GROUP_PREFIX = "record-index-"
_FILE_GROUP = re.compile(r"^\.?record-index-(\d{4})-0_")
_INT_MASK = 0xFFFFFFFF


def file_group_id(index: int) -> str:
    """The id of the record index's file group number `index` (Hudi: `record-index-0000-0`)."""
    return f"{FILE_GROUP_PREFIX}{index:04d}-0"


def java_string_hash(text: str) -> int:
    """Java's `String.hashCode` (31-polynomial over UTF-16 code units, 32-bit signed)."""
    h = 0
    units = text.encode("utf-16-be")
    for i in range(0, len(units), 2):
        h = (31 * h + (units[i] << 8 | units[i + 1])) & _INT_MASK
    return h - (1 << 32) if h & 0x80000000 else h


def file_group_of(key: str, count: int) -> int:
    """The file group (0 .. count-1) that holds `key`'s location, as HoodieTableMetadataUtil
    .mapRecordKeyToFileGroupIndex picks it: `abs(abs(hash) % count)` in Java, which Python's unbounded abs gives
    in one step (Java's abs of Integer.MIN_VALUE stays negative, and the outer abs undoes it)."""
    return abs(java_string_hash(key)) % count


def file_groups_of(keys: Sequence[str] | pa.Array, count: int) -> list[int]:
    """`file_group_of` of many keys (a list or a string column) at once: the hash runs over numpy columns (one
    step per character position) for ASCII keys, whose bytes are their UTF-16 code units; other keys take the
    scalar path."""
    if not len(keys):
        return []
    arr = keys if isinstance(keys, pa.Array) else pa.array(keys, pa.string())
    offsets = np.frombuffer(arr.buffers()[1], dtype=np.int32)[arr.offset:arr.offset + len(arr) + 1].astype(np.int64)
    data = np.frombuffer(arr.buffers()[2], dtype=np.uint8) if arr.buffers()[2] is not None else np.zeros(1, np.uint8)
    starts, lengths = offsets[:-1], np.diff(offsets)
    h = np.zeros(len(arr), dtype=np.int64)
    for j in range(int(lengths.max())):
        live = lengths > j
        h[live] = (h[live] * 31 + data[starts[live] + j]) & _INT_MASK
    groups = (np.abs(np.where(h >= 1 << 31, h - (1 << 32), h)) % count).tolist()
    ascii_keys = pc.string_is_ascii(arr).to_numpy(zero_copy_only=False)
    for i in np.flatnonzero(~ascii_keys).tolist():
        groups[i] = file_group_of(arr[i].as_py(), count)
    return groups


def file_group_count(entries: Iterable[FileEntry]) -> int:
    """How many file groups the partition has (its listing's `record-index-NNNN-0` files): 0 when none, a
    CorruptTableError when their numbers have holes (a key would hash to a missing group)."""
    seen = {int(m.group(1)) for e in entries if not e.is_dir and (m := _FILE_GROUP.match(e.name))}
    if seen and seen != set(range(len(seen))):
        raise CorruptTableError(f"the metadata table's record_index has file groups {sorted(seen)}, not 0..N-1: "
                                "drop the metadata table (a write with hoodie.metadata.enable=false) and enable it "
                                "again")
    return len(seen)


def file_group_slices(mdt: MetadataTable, mdt_timeline: Timeline,
                      data_timeline: Timeline | None) -> list[MetadataSlice]:
    """The latest slice of every file group of the record_index, in file group order."""
    listed = [e for e in mdt.storage.list(md.RECORD_INDEX) if not e.is_dir]
    return [files_slice(mdt, mdt_timeline, data_timeline, listed, md.RECORD_INDEX, file_group_id(i))
            for i in range(file_group_count(listed))]


class Places:
    """The distinct record index records a read met, numbered: a write gives all keys of a file group one
    record (its key blanked), so millions of entries name a few of them."""

    def __init__(self) -> None:
        self._codes: dict[tuple[tuple[str, Any], ...], int] = {}
        self.records: list[dict[str, Any]] = []
        self.locations: list[md.RecordLocation] = []

    def code(self, record: dict[str, Any]) -> int:
        """The number of `record`'s content (its key aside)."""
        info = record.get("recordIndexMetadata")
        if not isinstance(info, dict):
            raise CorruptTableError(f"record index entry {record.get('key')!r} has no recordIndexMetadata")
        content = tuple(sorted(info.items()))
        code = self._codes.get(content)
        if code is None:
            code = self._codes[content] = len(self.records)
            self.records.append(record)
            self.locations.append(md.record_location(record))
        return code


@dataclass(frozen=True)
class Located:
    """Keys the record index holds and their locations, as columns (a write looks up millions of keys)."""

    keys: pa.Array  # string
    codes: np.ndarray  # each key's record in `places`
    places: Places

    def as_dict(self) -> dict[str, md.RecordLocation]:
        where = self.places.locations
        return {k: where[c] for k, c in zip(self.keys.to_pylist(), self.codes.tolist(), strict=True)}


def located(mdt: MetadataTable, data_timeline: Timeline, keys: pa.Array | None = None) -> Located:
    """Where the record index puts each of `keys` (a string column; keys it does not hold are left out), or every
    key it holds when None: only the file groups the keys hash to are read, and in them only the data blocks
    whose key range holds one of them."""
    slices = file_group_slices(mdt, mdt.timeline(), data_timeline)
    places = Places()
    found: list[tuple[pa.Array, np.ndarray]] = []
    if keys is not None and slices:
        keys = pc.drop_null(keys)
        groups = np.asarray(file_groups_of(keys, len(slices)), dtype=np.int64)
        wanted = {index: keys.filter(pa.array(groups == index)) for index in np.unique(groups).tolist()}
    else:
        wanted = dict.fromkeys(range(len(slices)))
    for index, group_keys in wanted.items():
        found.append(slice_entries(mdt, slices[index], places, group_keys))
    codes = np.concatenate([c for _, c in found]) if found else np.zeros(0, np.int64)
    return Located(pa.concat_arrays([pa.array([], pa.string()), *(k for k, _ in found)]), codes, places)


def slice_entries(mdt: MetadataTable, sl: MetadataSlice, places: Places,
                  keys: pa.Array | None = None) -> tuple[pa.Array, np.ndarray]:
    """(keys, record codes in `places`) of the ones of `keys` (all when None) a file group's slice
    holds, merged column-wise as HoodieMetadataPayload merges record index records: the newest entry of a key
    wins, a DELETE removes it. Each distinct value of a file is decoded once."""
    wanted = None if keys is None else keys.cast(pa.binary())
    rels = ([sl.base] if sl.base is not None else []) + [rel for rel, _ in sl.logs]
    runs: list[tuple[pa.Array, np.ndarray]] = []  # (keys, record codes, -1 for a removal), oldest first
    for rel, data in zip(rels, read_slice_files(mdt, rels), strict=True):
        where = mdt.storage.full(rel)
        if rel == sl.base:
            runs.append(_run(AvroHFileReader(data, where, decoder=codec.decode), wanted, places))
            continue
        for block in read_blocks(data, where):
            if block.block_type == BlockType.HFILE_DATA:
                runs.append(_run(decode_hfile_data_block(block, where, codec.decode), wanted, places))
            elif block.block_type == BlockType.DELETE:
                gone = decode_delete_block(block, where).record_keys.cast(pa.binary())
                if wanted is not None:
                    gone = gone.filter(pc.is_in(gone, wanted))
                runs.append((gone, np.full(len(gone), -1, dtype=np.int64)))
    if not runs:
        return pa.array([], pa.string()), np.zeros(0, np.int64)
    all_keys = pa.concat_arrays([k.cast(pa.binary()) for k, _ in runs])
    all_codes = np.concatenate([c for _, c in runs])
    newest = pa.table({"k": all_keys, "i": np.arange(len(all_keys))}).group_by("k", use_threads=False) \
        .aggregate([("i", "max")])
    chosen = newest["i_max"].to_numpy()
    chosen = np.sort(chosen[all_codes[chosen] >= 0])
    return all_keys.take(chosen).cast(pa.string()), all_codes[chosen]


def _run(reader: AvroHFileReader, wanted: pa.Array | None, places: Places) -> tuple[pa.Array, np.ndarray]:
    """(keys, record codes) of the entries of one HFile that `wanted` names (all when None)."""
    keys, values = reader.hfile.select_columns(wanted)
    encoded = pc.dictionary_encode(values)
    firsts = pa.table({"v": encoded.indices, "i": np.arange(len(keys))}).group_by("v", use_threads=False) \
        .aggregate([("i", "min")])
    first_of = dict(zip(firsts["v"].to_pylist(), firsts["i_min"].to_pylist(), strict=True))
    code_of = np.zeros(len(encoded.dictionary), dtype=np.int64)
    for value_index, value in enumerate(encoded.dictionary.to_pylist()):
        code_of[value_index] = places.code(reader.record(keys[first_of[value_index]].as_py(), value))
    return keys, code_of[encoded.indices.to_numpy(zero_copy_only=False)] if len(keys) else np.zeros(0, np.int64)


def lookup(mdt: MetadataTable, data_timeline: Timeline, keys: Iterable[str]) -> dict[str, md.RecordLocation]:
    """Where the record index puts each of `keys` (keys it does not hold are left out)."""
    return located(mdt, data_timeline, pa.array(list(keys), pa.string())).as_dict()


def all_locations(mdt: MetadataTable, data_timeline: Timeline) -> dict[str, md.RecordLocation]:
    """Every key the record index holds, with its location (what a bootstrap or `validate` compares)."""
    return located(mdt, data_timeline).as_dict()


def location_record(key: str, partition: str, file_id: str, instant_ms: int) -> dict[str, Any]:
    """The record_index record of `key` living in `file_id` of data `partition`, written at `instant_ms`: a
    `<uuid>-<n>` file id in Hudi's compact form (encoding 0: the UUID's two halves and n), any other as text."""
    return md.record_index_record(key, {"partitionName": partition, **_file_id_fields(file_id),
                                        "instantTime": instant_ms, "position": None})


@functools.lru_cache(maxsize=4096)  # a write places its keys into a few file groups
def _file_id_fields(file_id: str) -> dict[str, Any]:
    head, _, tail = file_id.rpartition("-")
    try:
        parsed = uuid.UUID(head) if len(head) == 36 and tail.isdigit() else None
    except ValueError:
        parsed = None
    if parsed is None or str(parsed) != head:
        return {"fileIdHighBits": None, "fileIdLowBits": None, "fileIndex": None, "fileId": file_id,
                "fileIdEncoding": 1}
    bits = parsed.int
    return {"fileIdHighBits": _signed64(bits >> 64), "fileIdLowBits": _signed64(bits & (2**64 - 1)),
            "fileIndex": int(tail), "fileId": "", "fileIdEncoding": 0}


def _signed64(value: int) -> int:
    return value - (1 << 64) if value & (1 << 63) else value
