"""The Avro bytes of record index records (a HoodieMetadataRecord of type 5), written and read without fastavro.

A record index holds one record per key of the data table, so its files are written and read millions of records
at a time, where fastavro's generic path over the metadata record's many unions costs ~100 µs a record. Every
record index record has the same shape (meta fields and key null or blank, the other payloads null), so its bytes
are a fixed prefix, the HoodieRecordIndexInfo fields and a fixed suffix. A record of another shape is left to
fastavro (`encode` and `decode` return None): the codec is a fast path, never a second format.
"""

from __future__ import annotations

import functools
from typing import Any

from hudi_ds.metadata import records as md
from hudi_ds.schema.avro_binary import read_zigzag, zigzag
from hudi_ds.schema.meta import META_COLUMNS

# five null meta fields, the key blanked (Hudi stores it in the HFile key), type 5, three null payload unions,
# then the recordIndexMetadata union's record branch
_PREFIX = b"\x00" * 5 + b"\x00" + b"\x0a" + b"\x00" * 3 + b"\x02"
_SUFFIX = b"\x00"  # SecondaryIndexMetadata: null
_NULLABLE = ("partitionName", "fileIdHighBits", "fileIdLowBits", "fileIndex", "fileId", "instantTime")
_STRINGS = ("partitionName", "fileId")


def _value(name: str, value: Any) -> bytes:
    if name in _STRINGS:
        raw = value.encode("utf-8")
        return zigzag(len(raw)) + raw
    return zigzag(value)


def encode(record: dict[str, Any]) -> bytes | None:
    """The Avro bytes of a record index record as the metadata schema (8 or 9) encodes it; None when the record
    has another shape."""
    info = record.get("recordIndexMetadata")
    if record.get("type") != md.RecordType.RECORD_INDEX or not isinstance(info, dict) or record.get("key") or any(
            record.get(f) is not None for f in (*META_COLUMNS, "filesystemMetadata", "BloomFilterMetadata",
                                                "ColumnStatsMetadata", "SecondaryIndexMetadata")):
        return None
    try:
        instant, position = info.get("instantTime"), info.get("position")
        return b"".join((
            _location_bytes(*(info.get(name) for name in _NULLABLE[:5])),
            b"\x00" if instant is None else b"\x02" + zigzag(instant),
            zigzag(info["fileIdEncoding"]),
            b"\x00" if position is None else b"\x02" + zigzag(position),
            _SUFFIX))
    except (AttributeError, TypeError, KeyError):  # a value of the wrong type: fastavro names the problem
        return None


@functools.lru_cache(maxsize=4096)  # a write places its keys into a few file groups
def _location_bytes(*values: Any) -> bytes:
    """The prefix and the fields naming the partition and file group, shared by the keys of one file group."""
    return _PREFIX + b"".join(b"\x00" if v is None else b"\x02" + _value(name, v)
                              for name, v in zip(_NULLABLE, values, strict=False))


def decode(data: bytes, key: str) -> dict[str, Any] | None:
    """The record index record of `key` these bytes encode (as fastavro would decode it, the key restored); None
    when they hold another shape of metadata record (or are damaged: fastavro then says how)."""
    if not data.startswith(_PREFIX):
        return None
    try:
        pos = len(_PREFIX)
        info: dict[str, Any] = {}
        for name in _NULLABLE:
            branch = data[pos]
            pos += 1
            if branch == 0:
                info[name] = None
            elif branch != 2:
                return None
            elif name in _STRINGS:
                length, pos = read_zigzag(data, pos)
                if length < 0 or pos + length > len(data):
                    return None
                info[name] = data[pos:pos + length].decode("utf-8")
                pos += length
            else:
                info[name], pos = read_zigzag(data, pos)
        info["fileIdEncoding"], pos = read_zigzag(data, pos)
        branch = data[pos]
        pos += 1
        if branch == 0:
            info["position"] = None
        elif branch == 2:
            info["position"], pos = read_zigzag(data, pos)
        else:
            return None
    except (IndexError, UnicodeDecodeError):
        return None
    if data[pos:] != _SUFFIX:
        return None
    record = md.record_index_record(key, info)
    return record
