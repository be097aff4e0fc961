"""The Avro bytes of column_stats and partition_stats records (a HoodieMetadataRecord of type 3 or 6), written and
read without fastavro.

A commit writes one record per (file, indexed column) and the metadata compaction rewrites them all, where
fastavro's generic path over the metadata record's unions costs a few hundred µs a record. These records have one
shape: meta fields null, the key blanked (the HFile key holds it), only the HoodieMetadataColumnStats payload set,
its bounds wrappers of plain Avro types. A record of another shape, or a bound of a logical-type wrapper
(DecimalWrapper, TimeMicrosWrapper) or an ArrayWrapper, is left to fastavro (`encode` and `decode` return None):
the codec is a fast path, never a second format. Decoded records are what `AvroHFileReader` gives (bounds as
`(wrapper full name, {"value": ...})` pairs).
"""

from __future__ import annotations

import functools
import struct
from typing import Any

from hudi_ds.hfile.avro_records import Decoder, Encoder
from hudi_ds.metadata import records as md
from hudi_ds.metadata.avro_schema import NAMESPACE, WRAPPER_NAMES
from hudi_ds.schema.avro_binary import zigzag
from hudi_ds.schema.meta import META_COLUMNS

_STATS = "ColumnStatsMetadata"
_TYPES = (md.RecordType.COLUMN_STATS, md.RecordType.PARTITION_STATS)
_OTHER_PAYLOADS = ("filesystemMetadata", "BloomFilterMetadata", "recordIndexMetadata", "SecondaryIndexMetadata")
_COUNTS = ("valueCount", "nullCount", "totalSize", "totalUncompressedSize")
# the wrappers' union branch (1 + their place: branch 0 is null) and the Avro type of their value
_BRANCH = {f"{NAMESPACE}.{name}": i + 1 for i, name in enumerate(WRAPPER_NAMES)}
_NAME = {i: name for name, i in _BRANCH.items()}
_VALUE_TYPE = dict(zip(_BRANCH, ("boolean", "int", "long", "float", "double", "bytes", "string", "int", None, None,
                                 "long", "int"), strict=True))
_INT32, _INT64 = 1 << 31, 1 << 63


def _long(n: Any, bound: int = _INT64) -> bytes:
    if type(n) is not int or not -bound <= n < bound:
        raise TypeError(n)
    return zigzag(n)


def _text(s: Any) -> bytes:
    if type(s) is not str:
        raise TypeError(s)
    raw = s.encode("utf-8")
    return zigzag(len(raw)) + raw


def _optional(value: Any, encode: Any) -> bytes:
    return b"\x00" if value is None else b"\x02" + encode(value)


def _bound(bound: Any) -> bytes:
    if bound is None:
        return b"\x00"
    name, wrapped = bound  # a (full name, record) pair; anything else is fastavro's to judge
    kind = _VALUE_TYPE.get(name)
    value = wrapped["value"]
    if kind == "boolean" and type(value) is bool:
        body = b"\x01" if value else b"\x00"
    elif kind in ("int", "long"):
        body = _long(value, _INT32 if kind == "int" else _INT64)
    elif kind in ("float", "double") and type(value) is float:
        body = struct.pack("<f" if kind == "float" else "<d", value)
    elif kind == "bytes" and type(value) is bytes:
        body = zigzag(len(value)) + value
    elif kind == "string":
        body = _text(value)
    else:
        raise TypeError(name)
    return zigzag(_BRANCH[name]) + body


def encode(record: dict[str, Any], version: int) -> bytes | None:
    """The Avro bytes of a column_stats / partition_stats record as the metadata schema of table `version` (8 or
    9) encodes it; None when the record has another shape."""
    stats = record.get(_STATS)
    if record.get("type") not in _TYPES or not isinstance(stats, dict) or record.get("key") or any(
            record.get(f) is not None for f in (*META_COLUMNS, *_OTHER_PAYLOADS)):
        return None
    try:
        parts = [b"\x00" * 6, zigzag(int(record["type"])), b"\x00\x00\x02",
                 _optional(stats.get("fileName"), _text), _optional(stats.get("columnName"), _text),
                 _bound(stats.get("minValue")), _bound(stats.get("maxValue")),
                 *(_optional(stats.get(c), _long) for c in _COUNTS)]
        deleted, tight = stats["isDeleted"], stats.get("isTightBound", False)
        if type(deleted) is not bool or type(tight) is not bool:
            return None
        parts.append(b"\x01" if deleted else b"\x00")
        parts.append(b"\x01" if tight else b"\x00")
        if version >= 9:
            info = stats.get("valueType")
            parts.append(b"\x00" if info is None else
                         b"\x02" + _long(info["typeOrdinal"], _INT32) + _optional(info.get("additionalInfo"), _text))
        elif stats.get("valueType") is not None:
            return None
        parts.append(b"\x00\x00")  # recordIndexMetadata, SecondaryIndexMetadata: null
        return b"".join(parts)
    except (TypeError, ValueError, KeyError, AttributeError, UnicodeEncodeError):
        return None


class _Reader:
    def __init__(self, data: bytes) -> None:
        self.data = data
        self.pos = 0

    def byte(self) -> int:
        b = self.data[self.pos]
        self.pos += 1
        return b

    def long(self) -> int:
        shift = result = 0
        while True:
            b = self.byte()
            result |= (b & 0x7F) << shift
            if not b & 0x80:
                return (result >> 1) ^ -(result & 1)
            shift += 7
            if shift > 63:
                raise ValueError("varint too long")

    def raw(self) -> bytes:
        n = self.long()
        if n < 0 or self.pos + n > len(self.data):
            raise ValueError("length out of range")
        out = self.data[self.pos:self.pos + n]
        self.pos += n
        return bytes(out)

    def optional(self, read: Any) -> Any:
        branch = self.byte()
        if branch == 0:
            return None
        if branch != 2:
            raise ValueError("not a nullable union branch")
        return read()

    def text(self) -> str:
        return self.raw().decode("utf-8")

    def boolean(self) -> bool:
        b = self.byte()
        if b > 1:
            raise ValueError("not a boolean")
        return b == 1

    def bound(self) -> Any:
        branch = self.long()
        if branch == 0:
            return None
        name = _NAME[branch]  # KeyError for the array wrapper: fastavro's
        kind = _VALUE_TYPE[name]
        if kind == "boolean":
            value: Any = self.boolean()
        elif kind in ("int", "long"):
            value = self.long()
        elif kind in ("float", "double"):
            size = 4 if kind == "float" else 8
            (value,) = struct.unpack_from("<f" if kind == "float" else "<d", self.data, self.pos)
            self.pos += size
        elif kind == "bytes":
            value = self.raw()
        elif kind == "string":
            value = self.text()
        else:
            raise ValueError("a logical-type wrapper: fastavro's")
        return name, {"value": value}


def decode(data: bytes, key: str, version: int) -> dict[str, Any] | None:
    """The column_stats / partition_stats record of `key` these bytes encode (as AvroHFileReader decodes it with
    the metadata schema of table `version`, the key restored); None when they hold another shape of metadata
    record (or are damaged: fastavro then says how)."""
    if not data.startswith(b"\x00" * 6):
        return None
    r = _Reader(data)
    r.pos = 6
    try:
        record_type = r.long()
        if record_type not in _TYPES or data[r.pos:r.pos + 3] != b"\x00\x00\x02":
            return None
        r.pos += 3
        stats: dict[str, Any] = {"fileName": r.optional(r.text), "columnName": r.optional(r.text),
                                 "minValue": r.bound(), "maxValue": r.bound()}
        for c in _COUNTS:
            stats[c] = r.optional(r.long)
        stats["isDeleted"] = r.boolean()
        stats["isTightBound"] = r.boolean()
        if version >= 9:
            branch = r.byte()
            if branch == 0:
                stats["valueType"] = None
            elif branch == 2:
                stats["valueType"] = {"typeOrdinal": r.long(), "additionalInfo": r.optional(r.text)}
            else:
                return None
    except (IndexError, ValueError, KeyError, UnicodeDecodeError, struct.error):
        return None
    if data[r.pos:] != b"\x00\x00":
        return None
    return {**dict.fromkeys(META_COLUMNS), "key": key, "type": record_type, "filesystemMetadata": None,
            "BloomFilterMetadata": None, _STATS: stats, "recordIndexMetadata": None, "SecondaryIndexMetadata": None}


def encoder(version: int) -> Encoder:
    """`encode` for the metadata schema of table `version`, as hudi_ds.metadata.hfiles takes an encoder."""
    return functools.partial(encode, version=version)


def decoder(version: int) -> Decoder:
    """`decode` for the metadata schema of table `version`, as AvroHFileReader takes a decoder."""
    return functools.partial(decode, version=version)
