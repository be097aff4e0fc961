"""The record keys of the metadata table's column_stats and partition_stats partitions, and the file group a key
lands in, as Apache Hudi builds them (ColumnIndexID, PartitionIndexID, FileIndexID, HashID,
HoodieTableMetadataUtil.mapRecordKeyToFileGroupIndex).

A key is the base64 text of hashes: a column's and a partition's are XXH64 (seed 0xdabadaba, as Java's int
widened to a long) written big-endian, a file name's is its MD5 digest. A column_stats key is
column + partition + file, a partition_stats key column + partition; a non-partitioned table's partition is
".". A key's file group is Java's String.hashCode of the key modulo the partition's file group count.
"""

from __future__ import annotations

import base64
import functools
import hashlib
import struct

from hudi_ds.metadata.records import partition_key

_MASK = (1 << 64) - 1
_P1, _P2, _P3 = 0x9E3779B185EBCA87, 0xC2B2AE3D27D4EB4F, 0x165667B19E3779F9
_P4, _P5 = 0x85EBCA77C2B2AE63, 0x27D4EB2F165667C5
HASH_SEED = 0xdabadaba - (1 << 32)  # HashID.HASH_SEED, a negative Java int


def _rotl(x: int, r: int) -> int:
    return ((x << r) | (x >> (64 - r))) & _MASK


def _round(acc: int, lane: int) -> int:
    return (_rotl((acc + lane * _P2) & _MASK, 31) * _P1) & _MASK


def _merge(acc: int, val: int) -> int:
    return ((acc ^ _round(0, val)) * _P1 + _P4) & _MASK


def xxhash64(data: bytes, seed: int) -> int:
    """XXH64 of `data` (the xxHash specification), as an unsigned 64-bit integer."""
    seed &= _MASK
    n, i = len(data), 0
    if n >= 32:
        v = [(seed + _P1 + _P2) & _MASK, (seed + _P2) & _MASK, seed, (seed - _P1) & _MASK]
        while i + 32 <= n:
            lanes = struct.unpack_from("<4Q", data, i)
            v = [_round(a, lane) for a, lane in zip(v, lanes, strict=True)]
            i += 32
        acc = (_rotl(v[0], 1) + _rotl(v[1], 7) + _rotl(v[2], 12) + _rotl(v[3], 18)) & _MASK
        for lane_acc in v:
            acc = _merge(acc, lane_acc)
    else:
        acc = (seed + _P5) & _MASK
    acc = (acc + n) & _MASK
    while i + 8 <= n:
        (lane,) = struct.unpack_from("<Q", data, i)
        acc = (_rotl(acc ^ _round(0, lane), 27) * _P1 + _P4) & _MASK
        i += 8
    if i + 4 <= n:
        (word,) = struct.unpack_from("<I", data, i)
        acc = (_rotl(acc ^ (word * _P1 & _MASK), 23) * _P2 + _P3) & _MASK
        i += 4
    while i < n:
        acc = (_rotl(acc ^ (data[i] * _P5 & _MASK), 11) * _P1) & _MASK
        i += 1
    acc = ((acc ^ (acc >> 33)) * _P2) & _MASK
    acc = ((acc ^ (acc >> 29)) * _P3) & _MASK
    return acc ^ (acc >> 32)


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode("ascii")


@functools.lru_cache(maxsize=4096)  # a commit keys thousands of files by a few columns and partitions
def column_id(column: str) -> str:
    """ColumnIndexID(column).asBase64EncodedString()."""
    return _b64(xxhash64(column.encode("utf-8"), HASH_SEED).to_bytes(8, "big"))


@functools.lru_cache(maxsize=4096)
def partition_id(partition: str) -> str:
    """PartitionIndexID of a data partition's relative path ("" for a non-partitioned table)."""
    return _b64(xxhash64(partition_key(partition).encode("utf-8"), HASH_SEED).to_bytes(8, "big"))


def file_id(file_name: str) -> str:
    """FileIndexID(file name).asBase64EncodedString()."""
    return _b64(hashlib.md5(file_name.encode("utf-8"), usedforsecurity=False).digest())


def column_stats_key(partition: str, file_name: str, column: str) -> str:
    return column_id(column) + partition_id(partition) + file_id(file_name)


def partition_stats_key(partition: str, column: str) -> str:
    return column_id(column) + partition_id(partition)


def file_group_index(key: str, file_groups: int) -> int:
    """mapRecordKeyToFileGroupIndex: Java's String.hashCode of `key` (over UTF-16 code units), made
    non-negative as Math.abs does, modulo `file_groups`."""
    h = 0
    for unit in struct.unpack(f">{len(key.encode('utf-16-be')) // 2}H", key.encode("utf-16-be")):
        h = (31 * h + unit) & 0xFFFFFFFF
    signed = h - (1 << 32) if h >= 1 << 31 else h
    return abs(signed) % file_groups  # Java's abs(MIN_VALUE) stays negative; its remainder's abs is this too
