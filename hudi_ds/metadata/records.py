"""The metadata table's records (HoodieMetadataRecord): keys, builders, typed views and Hudi's merge rules.

One record type per metadata partition, told apart by the `type` field: the `files` partition holds one record
per data partition (key: the partition path, `.` for a non-partitioned table; value: file name -> size and
deleted flag) and the partition list (key `__all_partitions__`); `column_stats` and `partition_stats` hold
min/max/counts per file (or partition) and column; `record_index` maps a record key to its file group.

Merging follows HoodieMetadataPayload.preCombine: log records fold in instant order (newer over older), then
over the base file's record. A file listing merges entry by entry (deletions drop the file, sizes only grow); a
column statistic widens its range and adds its counts unless the newer one is a tight bound; the other types
take the newer record. A DELETE block entry, a deleted column statistic, bloom filter or secondary index entry
removes the record; a later record of that key starts afresh rather than merging with the base file's.
"""

from __future__ import annotations

import uuid
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from enum import IntEnum
from typing import Any

from hudi_ds.errors import CorruptTableError, InvalidDataError, UnsupportedTableError
from hudi_ds.schema.java_text import java_number
from hudi_ds.schema.meta import META_COLUMNS

# Metadata partitions (folders of .hoodie/metadata); index partitions add a name after their prefix.
FILES = "files"
COLUMN_STATS = "column_stats"
PARTITION_STATS = "partition_stats"
RECORD_INDEX = "record_index"
BLOOM_FILTERS = "bloom_filters"
SECONDARY_INDEX_PREFIX = "secondary_index_"
EXPRESSION_INDEX_PREFIX = "expr_index_"

ALL_PARTITIONS_KEY = "__all_partitions__"
NON_PARTITIONED_KEY = "."  # the key of a non-partitioned table's only partition (relative path "")


class RecordType(IntEnum):
    """The `type` field (HoodieMetadataPayload / MetadataPartitionType record types)."""

    PARTITION_LIST = 1
    FILE_LIST = 2
    COLUMN_STATS = 3
    BLOOM_FILTER = 4
    RECORD_INDEX = 5
    PARTITION_STATS = 6
    SECONDARY_INDEX = 7


_RECORD_FIELDS = (*META_COLUMNS, "key", "type", "filesystemMetadata", "BloomFilterMetadata", "ColumnStatsMetadata",
                  "recordIndexMetadata", "SecondaryIndexMetadata")


def partition_key(partition_path: str) -> str:
    """The `files` key of a data partition (relative path; "" for a non-partitioned table)."""
    return NON_PARTITIONED_KEY if partition_path == "" else partition_path


def partition_path(key: str) -> str:
    """The data partition's relative path named by a `files` key or a partition list entry."""
    return "" if key == NON_PARTITIONED_KEY else key


# ------------------------------------------------------------------------------------------------ files


@dataclass(frozen=True)
class FileInfo:
    """One file of a listing: its size in bytes, or a tombstone (`is_deleted`) that removes it."""

    size: int
    is_deleted: bool


def _record(key: str, record_type: RecordType, **fields: Any) -> dict[str, Any]:
    out: dict[str, Any] = dict.fromkeys(_RECORD_FIELDS)
    out.update(key=key, type=int(record_type), **fields)
    return out


def file_list_record(partition: str, added: Mapping[str, int], deleted: Iterable[str] = ()) -> dict[str, Any]:
    """The `files` record of one data partition's change: files added (name -> size in bytes, > 0) and deleted."""
    listing: dict[str, dict[str, Any]] = {}
    for name, size in added.items():
        if size <= 0:
            raise InvalidDataError(f"metadata table listing: file {name!r} must have a size > 0, got {size}")
        listing[name] = {"size": int(size), "isDeleted": False}
    for name in deleted:
        listing[name] = {"size": 0, "isDeleted": True}
    return _record(partition_key(partition), RecordType.FILE_LIST, filesystemMetadata=listing)


def partition_list_record(partitions: Iterable[str], deleted: bool = False) -> dict[str, Any]:
    """The `__all_partitions__` record adding (or, `deleted`, removing) data partitions."""
    listing = {partition_key(p): {"size": 0, "isDeleted": deleted} for p in partitions}
    return _record(ALL_PARTITIONS_KEY, RecordType.PARTITION_LIST, filesystemMetadata=listing)


def file_infos(record: Mapping[str, Any]) -> dict[str, FileInfo]:
    """Every entry of a `files` record, tombstones included."""
    listing = record.get("filesystemMetadata") or {}
    return {name: FileInfo(int(info["size"]), bool(info["isDeleted"])) for name, info in listing.items()}


def listed_files(record: Mapping[str, Any]) -> dict[str, int]:
    """The files a (merged) `files` record lists: name -> size, tombstones left out."""
    return {name: info.size for name, info in file_infos(record).items() if not info.is_deleted}


def listed_partitions(record: Mapping[str, Any]) -> list[str]:
    """The data partitions (relative paths, sorted) a (merged) `__all_partitions__` record lists."""
    return sorted(partition_path(name) for name in listed_files(record))


def _combine_listings(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, Any]:
    """HoodieTableMetadataUtil.combineFileSystemMetadata: a newer tombstone drops the older entry (and is kept
    only when there is none, for a later merge with the base file); otherwise the larger size wins."""
    combined = dict(older.get("filesystemMetadata") or {})
    for name, info in (newer.get("filesystemMetadata") or {}).items():
        old = combined.get(name)
        if old is None:
            combined[name] = info
        elif info["isDeleted"]:
            if old["isDeleted"]:
                combined[name] = info
            else:
                del combined[name]
        else:
            combined[name] = {"size": max(int(info["size"]), int(old["size"])), "isDeleted": False}
    return {**newer, "filesystemMetadata": combined}


# ------------------------------------------------------------------------------------- column statistics


@dataclass(frozen=True)
class WrappedValue:
    """A column statistics bound: the wrapper record's short name (e.g. "IntWrapper", "DateWrapper") and the
    plain value inside it (DateWrapper: days since epoch; TimestampMicrosWrapper: microseconds; ArrayWrapper:
    a list of WrappedValue)."""

    wrapper: str
    value: Any


def unwrap(bound: Any) -> WrappedValue | None:
    """A decoded minValue/maxValue: None, or a `(full wrapper name, {"value": ...})` pair."""
    if bound is None:
        return None
    if not (isinstance(bound, tuple) and len(bound) == 2 and isinstance(bound[1], dict)):
        raise CorruptTableError(f"column statistics bound {bound!r} is not a wrapper record")
    name = bound[0].rsplit(".", 1)[-1]
    if name == "ArrayWrapper":
        items = bound[1].get("wrappedValues") or []
        return WrappedValue(name, [unwrap(item) for item in items])
    return WrappedValue(name, bound[1].get("value"))


@dataclass(frozen=True)
class ColumnStats:
    """A `column_stats` (per file) or `partition_stats` (per partition: `file_name` holds the partition path)
    entry for one column."""

    file_name: str | None
    column_name: str | None
    min_value: WrappedValue | None
    max_value: WrappedValue | None
    value_count: int | None
    null_count: int | None
    total_size: int | None
    total_uncompressed_size: int | None
    is_deleted: bool
    is_tight_bound: bool
    value_type_ordinal: int | None  # Hudi 1.1's HoodieValueTypeInfo.typeOrdinal; None in Hudi 1.0 records


def column_stats_record(key: str, record_type: RecordType, stats: Mapping[str, Any]) -> dict[str, Any]:
    """A column_stats / partition_stats record of `key` holding the HoodieMetadataColumnStats `stats`."""
    return _record(key, record_type, ColumnStatsMetadata=dict(stats))


def column_stats(record: Mapping[str, Any]) -> ColumnStats:
    """The typed view of a column_stats / partition_stats record."""
    stats = record.get("ColumnStatsMetadata")
    if stats is None:
        raise CorruptTableError(f"metadata record {record.get('key')!r} of type {record.get('type')} has no "
                                "ColumnStatsMetadata")
    value_type = stats.get("valueType")
    return ColumnStats(
        file_name=stats.get("fileName"), column_name=stats.get("columnName"),
        min_value=unwrap(stats.get("minValue")), max_value=unwrap(stats.get("maxValue")),
        value_count=stats.get("valueCount"), null_count=stats.get("nullCount"), total_size=stats.get("totalSize"),
        total_uncompressed_size=stats.get("totalUncompressedSize"), is_deleted=bool(stats.get("isDeleted")),
        is_tight_bound=bool(stats.get("isTightBound")),
        value_type_ordinal=None if value_type is None else value_type.get("typeOrdinal"))


def _java_order(value: WrappedValue) -> Any:
    """A sort key that orders values as Hudi 1.1 compares them: strings by UTF-16 code unit (Java's compareTo),
    bytes (a decimal's unscaled value, the only BytesWrapper bound of an indexed type) by value, as its DECIMAL
    value type does; a byte-wise order would merge ranges that miss values (0x2327 = 8999 sorts after
    0x01e848 = 125000)."""
    v = value.value
    if isinstance(v, str):
        return v.encode("utf-16-be")
    if isinstance(v, bytes):
        return int.from_bytes(v, "big", signed=True)
    if isinstance(v, list):
        raise UnsupportedTableError("merging ArrayWrapper column statistics is not supported")
    return v


def _as_text(bound: Any, other: Any) -> Any:
    """A number bound beside a text bound of the same column (files written before and after Hudi's writer
    promoted the column to string, HoodieAvroUtils printing the numbers) as that text, so the merged range covers
    both as they read."""
    value, beside = unwrap(bound), unwrap(other)
    if value is None or beside is None or not isinstance(beside.value, str):
        return bound
    v = value.value
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return bound
    return (other[0], {"value": java_number(v, False) if isinstance(v, float) else str(v)})


def _pick(a: Any, b: Any, want_max: bool) -> Any:
    a, b = _as_text(a, b), _as_text(b, a)
    wa, wb = unwrap(a), unwrap(b)
    if wa is None:
        return b
    if wb is None:
        return a
    try:
        b_wins = _java_order(wb) > _java_order(wa) if want_max else _java_order(wb) < _java_order(wa)
    except TypeError as exc:
        raise CorruptTableError(f"column statistics bounds {wa} and {wb} cannot be compared") from exc
    return b if b_wins else a


def _sum(a: int | None, b: int | None) -> int | None:
    return None if a is None and b is None else (a or 0) + (b or 0)


def _combine_column_stats(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, Any]:
    """HoodieTableMetadataUtil.mergeColumnStatsRecords: a tight-bound (or previously deleted) newer entry
    replaces the older one; otherwise the range widens and the counts and sizes add up."""
    old, new = older["ColumnStatsMetadata"], newer["ColumnStatsMetadata"]
    if old.get("isDeleted") or new.get("isTightBound"):
        return dict(newer)
    merged = {**new,
              "minValue": _pick(old.get("minValue"), new.get("minValue"), want_max=False),
              "maxValue": _pick(old.get("maxValue"), new.get("maxValue"), want_max=True)}
    for field in ("valueCount", "nullCount", "totalSize", "totalUncompressedSize"):
        merged[field] = _sum(old.get(field), new.get(field))
    return {**newer, "ColumnStatsMetadata": merged}


# ------------------------------------------------------------------------------------------ record index


@dataclass(frozen=True)
class RecordLocation:
    """Where the record index puts a record key: data partition, file group id, the commit that wrote it (epoch
    milliseconds) and, when recorded, the row position in its file group."""

    partition: str | None
    file_id: str
    instant_time_ms: int | None
    position: int | None


def record_index_record(key: str, info: dict[str, Any]) -> dict[str, Any]:
    """The record_index record of `key` with its HoodieRecordIndexInfo `info` (taken, not copied)."""
    return _record(key, RecordType.RECORD_INDEX, recordIndexMetadata=info)


def record_location(record: Mapping[str, Any]) -> RecordLocation:
    """The typed view of a record_index record; UUID-encoded file ids (encoding 0) are spelled out."""
    info = record.get("recordIndexMetadata")
    if info is None:
        raise CorruptTableError(f"record index entry {record.get('key')!r} has no recordIndexMetadata")
    if info.get("fileIdEncoding", 0) == 1:
        file_id = info.get("fileId") or ""
    else:
        high, low = info.get("fileIdHighBits"), info.get("fileIdLowBits")
        if high is None or low is None:
            raise CorruptTableError(f"record index entry {record.get('key')!r} lacks its file id bits")
        file_id = str(uuid.UUID(int=(high & (2**64 - 1)) << 64 | (low & (2**64 - 1))))
        index = info.get("fileIndex")
        if index is not None and index != -1:  # -1: a file id without a "-N" suffix
            file_id = f"{file_id}-{index}"
    return RecordLocation(info.get("partitionName"), file_id, info.get("instantTime"), info.get("position"))


# --------------------------------------------------------------------------------------- secondary index


def secondary_index_record(key: str) -> dict[str, Any]:
    """The secondary index record of `key` (`<escaped value>$<escaped record key>`): a live entry (removals are
    DELETE block entries, as Hudi writes them)."""
    return _record(key, RecordType.SECONDARY_INDEX, SecondaryIndexMetadata={"isDeleted": False})


# ------------------------------------------------------------------------------------------------ merging


def is_tombstone(record: Mapping[str, Any]) -> bool:
    """Whether the record deletes its key (HoodieMetadataPayload.isDeletedRecord)."""
    record_type = record.get("type")
    if record_type in (RecordType.COLUMN_STATS, RecordType.PARTITION_STATS):
        return bool((record.get("ColumnStatsMetadata") or {}).get("isDeleted"))
    if record_type == RecordType.BLOOM_FILTER:
        return bool((record.get("BloomFilterMetadata") or {}).get("isDeleted"))
    if record_type == RecordType.SECONDARY_INDEX:
        return bool((record.get("SecondaryIndexMetadata") or {}).get("isDeleted"))
    return False


def combine(older: Mapping[str, Any], newer: Mapping[str, Any]) -> dict[str, Any] | None:
    """`newer` merged over `older` (two versions of one key); None when the result deletes the key."""
    if is_tombstone(newer):
        return None
    if is_tombstone(older):
        return dict(newer)
    if older.get("type") != newer.get("type"):
        raise CorruptTableError(f"metadata record {newer.get('key')!r} changes type from {older.get('type')} to "
                                f"{newer.get('type')}")
    if newer.get("type") in (RecordType.PARTITION_LIST, RecordType.FILE_LIST):
        return _combine_listings(older, newer)
    if newer.get("type") in (RecordType.COLUMN_STATS, RecordType.PARTITION_STATS):
        return _combine_column_stats(older, newer)
    return dict(newer)


def merge(base: Iterable[tuple[str, dict[str, Any]]],
          updates: Iterable[tuple[str, dict[str, Any] | None]]) -> dict[str, dict[str, Any]]:
    """The records of a file slice: `base` (key, record) pairs, then `updates` from its log blocks in instant
    order, None for a DELETE block entry. Returns key -> merged record for the keys that remain. After a deletion
    (a DELETE entry or a tombstone record) a key starts afresh: later records of it do not merge with anything
    before the deletion, the base file's record included."""
    pending: dict[str, dict[str, Any] | None] = {}
    restarted: set[str] = set()
    for key, record in updates:
        previous = pending.get(key)
        if record is None or is_tombstone(record):
            restarted.add(key)
        pending[key] = record if record is None or previous is None else combine(previous, record)
    out = dict(base)
    for key, record in pending.items():
        older = None if key in restarted else out.get(key)
        out.pop(key, None)
        if record is None:
            continue
        merged = combine(older, record) if older is not None else None if is_tombstone(record) else dict(record)
        if merged is not None:
            out[key] = merged
    return out
