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
    key_at, key_len, part_at, part_len, value_at, value_len = (np.array(v, dtype=np.int64) for v in found[:6])
    branches = set(found[6])
    if len(branches) > 1:
        return None
    data = np.frombuffer(body, dtype=np.uint8)
    keys = _strings(data, key_at, key_len)
    parts = _strings(data, part_at, part_len)
    ordering = _ordering(data, branches.pop() if branches else 0, value_at, value_len)
    if keys is None or parts is None or ordering is None:
        return None
    return keys, parts, ordering


def _field_positions(body: bytes) -> tuple[list[int], ...] | None:
    """Where each record's key, partition path and ordering value start and how many bytes they take (a null
    partition path starts at -1), and the ordering value's union branch; None for a list this module does
    not read. Every Avro array block is a count (negative: followed by its byte size) and as many records."""
    key_at: list[int] = []
    key_len: list[int] = []
    part_at: list[int] = []
    part_len: list[int] = []
    value_at: list[int] = []
    value_len: list[int] = []
    branches: list[int] = []
    pos = 0
    while True:
        count, pos = _varint(body, pos)
        if count == 0:
            break
        if count < 0:
            count = -count
            _, pos = _varint(body, pos)
        for _ in range(count):
            if body[pos] != _STRING:
                return None  # a null record key: the reference decoder reports it
            size = body[pos + 1]
            if size < 0x80:
                pos += 2
                size = size >> 1 if not size & 1 else -1  # an odd byte is a negative length
            else:
                size, pos = _varint(body, pos + 1)
            if size < 0:
                return None
            key_at.append(pos)
            key_len.append(size)
            pos += size
            tag = body[pos]
            if tag == 0:
                part_at.append(-1)
                part_len.append(0)
                pos += 1
            elif tag == _STRING:
                size, pos = _varint(body, pos + 1)
                if size < 0:
                    return None
                part_at.append(pos)
                part_len.append(size)
                pos += size
            else:
                return None
            branch = body[pos] >> 1
            pos += 1
            if branch not in _BRANCH_TYPES:
                return None
            start = pos
            if branch:
                while body[pos] >= 0x80:
                    pos += 1
                pos += 1
                if pos - start > _MAX_VARINT_BYTES:
                    return None
            branches.append(branch)
            value_at.append(start)
            value_len.append(pos - start)
    return key_at, key_len, part_at, part_len, value_at, value_len, branches


def _varint(data: bytes, pos: int) -> tuple[int, int]:
    """An Avro zigzag varint at `pos`: (value, position after it)."""
    shift = result = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7


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
