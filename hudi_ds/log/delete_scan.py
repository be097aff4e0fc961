"""Hudi's delete list (HoodieDeleteRecordList, the body of a DELETE block) read by one Python pass that only
notes where each record's fields lie, the columns then cut out of the bytes by NumPy.

About six times faster than fastavro, which builds a dict per record, and unlike polars' Avro reader it needs
no import (~0.4 s of CPU, paid inside the first merge-on-read snapshot of a process) and no per-block setup
(a slice's delete block holds a few hundred keys, where polars spends ~3 µs a record). It reads the lists
Hudi's writers produce: string record keys, partition paths null or strings, and every orderingVal null or of
one integer branch (int or long, the types of most ordering fields). Anything else, and bytes it cannot
follow, give None: the callers' reference decoder reads the list or names the damage.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa

from hudi_ds.schema.avro_binary import read_zigzag

_STRING = 2  # the zigzag-encoded index of the string branch of ["null", "string"]
_BRANCH_TYPES = {0: pa.null(), 1: pa.int32(), 2: pa.int64()}  # orderingVal union branch -> Arrow type
_MAX_VARINT_BYTES = 10
_MAX_STRING_BYTES = 2**31 - 1  # a `string` array's int32 offsets


def scan_delete_list(body: bytes) -> tuple[pa.Array, pa.Array, pa.Array] | None:
    """The record keys, partition paths and ordering values of a delete list, or None (see the module)."""
    try:
        found = _field_positions(body)
    except IndexError:  # truncated
        return None
    if found is None:
        return None
    fields = np.array(found, dtype=np.int64).reshape(-1, 7)
    branches = np.unique(fields[:, 6])
    if len(branches) > 1:
        return None
    data = np.frombuffer(body, dtype=np.uint8)
    keys = _strings(data, fields[:, 0], fields[:, 1])
    parts = _strings(data, fields[:, 2], fields[:, 3])
    ordering = _ordering(data, int(branches[0]) if len(branches) else 0, fields[:, 4], fields[:, 5])
    if keys is None or parts is None or ordering is None:
        return None
    return keys, parts, ordering


def _field_positions(body: bytes) -> list[int] | None:
    """Seven numbers a record: where its key, partition path and ordering value start and how many bytes
    each takes (a null partition path starts at -1), and the ordering value's union branch; None for a list
    this module does not read. Every Avro array block is a count (negative: followed by its byte size) and as
    many records; the lengths and union indexes are varints, almost always of one byte."""
    out: list[int] = []
    add = out.extend
    pos = 0
    while True:
        count, pos = read_zigzag(body, pos)
        if count == 0:
            return out
        if count < 0:
            count = -count
            _, pos = read_zigzag(body, pos)
        for _ in range(count):
            if body[pos] != _STRING:
                return None  # a null record key: the reference decoder reports it
            key_at, key_len = _string_at(body, pos + 1)
            pos = key_at + key_len
            tag = body[pos]
            if tag == 0:
                part_at, part_len = -1, 0
                pos += 1
            elif tag == _STRING:
                part_at, part_len = _string_at(body, pos + 1)
                pos = part_at + part_len
            else:
                return None
            branch = body[pos] >> 1
            start = pos = pos + 1
            if branch not in _BRANCH_TYPES:
                return None
            if branch:
                while body[pos] >= 0x80:
                    pos += 1
                pos += 1
                if pos - start > _MAX_VARINT_BYTES:
                    return None
            add((key_at, key_len, part_at, part_len, start, pos - start, branch))


def _string_at(body: bytes, pos: int) -> tuple[int, int]:
    """Where the string whose length varint is at `pos` starts, and its length (IndexError: a negative one)."""
    size = body[pos]
    if size < 0x80 and not size & 1:
        return pos + 1, size >> 1
    size, pos = read_zigzag(body, pos)
    if size < 0:
        raise IndexError("negative string length")
    return pos, size


def _strings(data: np.ndarray, at: np.ndarray, length: np.ndarray) -> pa.Array | None:
    """The strings at `at` (-1: null) of `length` bytes, gathered into one Arrow array; None when they are
    not UTF-8 or too long for one array."""
    n = len(at)
    offsets = np.zeros(n + 1, dtype=np.int64)
    np.cumsum(length, out=offsets[1:])
    if offsets[-1] > _MAX_STRING_BYTES:
        return None
    gathered = data[np.repeat(at - offsets[:-1], length) + np.arange(offsets[-1])]
    valid = at >= 0
    nulls = n - int(valid.sum())
    bitmap = pa.py_buffer(np.packbits(valid, bitorder="little")) if nulls else None
    strings = pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(gathered),
                                          bitmap, nulls)
    try:
        strings.validate(full=True)
    except pa.ArrowInvalid:
        return None
    return strings


def _ordering(data: np.ndarray, branch: int, at: np.ndarray, length: np.ndarray) -> pa.Array | None:
    """The ordering values: nulls, or the zigzag varints at `at` as the branch's integer type (None: one does
    not fit an int)."""
    n = len(at)
    if branch == 0:
        return pa.nulls(n)
    raw = np.zeros(n, dtype=np.uint64)
    for i in range(int(length.max()) if n else 0):
        longer = length > i
        raw[longer] |= (data[at[longer] + i] & np.uint8(0x7F)).astype(np.uint64) << np.uint64(7 * i)
    values = (raw >> np.uint64(1)).astype(np.int64) ^ -(raw & np.uint64(1)).astype(np.int64)
    try:
        return pa.array(values, pa.int64()).cast(_BRANCH_TYPES[branch])
    except pa.ArrowInvalid:
        return None
