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
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError
from hudi_ds.metadata import record_index_codec as codec
from hudi_ds.metadata import records as md
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import MetadataSlice, files_slice, merged_records
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


def file_groups_of(keys: Sequence[str], count: int) -> list[int]:
    """`file_group_of` of many keys at once: the hash runs over numpy columns (one step per character
    position) for ASCII keys, whose bytes are their UTF-16 code units; other keys take the scalar path."""
    if not keys:
        return []
    arr = pa.array(keys, pa.string())
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
        groups[i] = file_group_of(keys[i], count)
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


def locations(records: Mapping[str, Mapping[str, Any]]) -> dict[str, md.RecordLocation]:
    """Key -> location of a file group's merged records."""
    return {key: md.record_location(record) for key, record in records.items()}


def lookup(mdt: MetadataTable, data_timeline: Timeline, keys: Iterable[str]) -> dict[str, md.RecordLocation]:
    """Where the record index puts each of `keys` (keys it does not hold are left out): only the file groups the
    keys hash to are read."""
    slices = file_group_slices(mdt, mdt.timeline(), data_timeline)
    if not slices:
        return {}
    key_list = list(keys)
    groups = np.asarray(file_groups_of(key_list, len(slices)), dtype=np.int64)
    column = pa.array(key_list, pa.string())
    out: dict[str, md.RecordLocation] = {}
    for index in np.unique(groups).tolist():
        group_keys = set(column.filter(pa.array(groups == index)).to_pylist())
        merged = merged_records(mdt, slices[index], group_keys, codec.decode)
        out.update((k, md.record_location(record)) for k, record in merged.items())
    return out


def all_locations(mdt: MetadataTable, data_timeline: Timeline) -> dict[str, md.RecordLocation]:
    """Every key the record index holds, with its location (what a bootstrap or `validate` compares)."""
    out: dict[str, md.RecordLocation] = {}
    for sl in file_group_slices(mdt, mdt.timeline(), data_timeline):
        out.update(locations(merged_records(mdt, sl, decoder=codec.decode)))
    return out


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
