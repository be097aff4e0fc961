"""Hudi's KeyValue layout inside data and index blocks (HBase's KeyValue with an empty column family).

A data block entry: key length (int), value length (int), key, value, MVCC timestamp (one zero byte). A key:
content length (short), content (the UTF-8 record key), then the rest of a standard KeyValue key so HBase can
parse it: column family length 0, timestamp Long.MAX_VALUE ("latest"), key type Put (4). Keys compare by content
only: every Hudi key carries the same rest, and HBase's shortened "fake" index keys differ only there.
"""

from __future__ import annotations

import struct

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError

KEY_REST = b"\x00" + struct.pack(">q", (1 << 63) - 1) + b"\x04"  # family length, timestamp, key type Put
MAX_KEY_CONTENT = 0x7FFF  # the content length is a Java short
_LENGTHS = struct.Struct(">ii")
_SHORT = struct.Struct(">h")
# an entry's lengths: whole key, value, key content
_ENTRY_HEAD = np.dtype([("key", ">i4"), ("value", ">i4"), ("content", ">i2")])


def full_key(content: bytes) -> bytes:
    """The KeyValue key of `content`: length, content, family length, timestamp, type."""
    return _SHORT.pack(len(content)) + content + KEY_REST


def index_key(content: bytes) -> bytes:
    """A key as Hudi's writer puts it in the root index and `hfile.LASTKEY`: length and content only (its reader
    parses no further)."""
    return _SHORT.pack(len(content)) + content


def key_content(key: bytes | memoryview, what: str) -> bytes:
    """The content of a (full or index) key: the bytes its leading length covers."""
    if len(key) < 2:
        raise CorruptTableError(f"{what}: key shorter than its length field")
    (size,) = _SHORT.unpack_from(key, 0)
    if size < 0 or 2 + size > len(key):
        raise CorruptTableError(f"{what}: key length {size} runs past the key")
    return bytes(key[2:2 + size])


def encode_entries(contents: pa.Array, values: pa.Array) -> bytes:
    """The payload of a data block holding the entries (key content, value) of two binary columns, in order:
    each entry's lengths, key and value joined straight from the columns' Arrow buffers."""
    if not len(contents):
        return b""
    content_len = pc.binary_length(contents).to_numpy(zero_copy_only=False)
    head = np.empty(len(contents), dtype=_ENTRY_HEAD)
    head["key"] = content_len + 2 + len(KEY_REST)
    head["value"] = pc.binary_length(values).to_numpy(zero_copy_only=False)
    head["content"] = content_len
    heads = pa.FixedSizeBinaryArray.from_buffers(pa.binary(_ENTRY_HEAD.itemsize), len(head),
                                                 [None, pa.py_buffer(head.tobytes())]).cast(pa.binary())
    # the scalars are built here, not at import: pyarrow's first scalar imports pandas where it is installed
    key_rest, mvcc, no_separator = (pa.scalar(b, pa.binary()) for b in (KEY_REST, b"\x00", b""))
    joined = pc.binary_join_element_wise(heads, contents, key_rest, values, mvcc, no_separator)
    offsets = np.frombuffer(joined.buffers()[1], dtype=np.int32)[joined.offset:joined.offset + len(joined) + 1]
    return joined.buffers()[2][int(offsets[0]):int(offsets[-1])].to_pybytes()


def entry_size(content: bytes, value: bytes) -> int:
    """Bytes one entry takes in a data block payload."""
    return 8 + 2 + len(content) + len(KEY_REST) + len(value) + 1


def decode_entries(payload: bytes, what: str, mvcc: bool = True) -> tuple[pa.Array, pa.Array]:
    """(key contents, values) of a data block payload, in file order, as binary columns. `mvcc`: entries end with
    the MVCC byte (file info KEY_VALUE_VERSION 1, which every Hudi writer sets). Only the walk from entry to entry
    is a Python loop; the lengths are checked and the columns gathered with numpy."""
    tail = 1 if mvcc else 0
    data = np.frombuffer(payload, dtype=np.uint8)
    at = _anchored_entry_starts(data, tail)
    if at is None:
        at = _walked_entry_starts(payload, what, tail)
    heads = data[at[:, None] + np.arange(_ENTRY_HEAD.itemsize)].view(_ENTRY_HEAD)[:, 0]
    key_len, value_len = heads["key"].astype(np.int64), heads["value"].astype(np.int64)
    content_len = heads["content"].astype(np.int64)
    bad = np.flatnonzero((content_len < 0) | (content_len > key_len - 2))
    if bad.size:
        raise CorruptTableError(f"{what}: entry at byte {int(at[bad[0]])} of a data block runs past it")
    value_at = at + 8 + key_len
    if tail and data[value_at + value_len].any():
        raise CorruptTableError(f"{what}: entry with a non-zero MVCC timestamp (HBase versioned data, which "
                                "Hudi never writes)")
    return _gathered(payload, at + 10, content_len, value_at, value_len)


def _walked_entry_starts(payload: bytes, what: str, tail: int) -> np.ndarray:
    """The entries' start offsets, found by walking from entry to entry (any KeyValue layout)."""
    starts: list[int] = []
    pos, end = 0, len(payload)
    unpack = _LENGTHS.unpack_from
    while pos + 10 <= end:
        key_len, value_len = unpack(payload, pos)
        if key_len < 2 or value_len < 0:
            raise CorruptTableError(f"{what}: entry at byte {pos} of a data block runs past it")
        starts.append(pos)
        pos += 8 + key_len + value_len + tail
    if pos < end:
        raise CorruptTableError(f"{what}: truncated entry at byte {pos} of a data block")
    if pos > end:
        raise CorruptTableError(f"{what}: entry at byte {starts[-1]} of a data block runs past it")
    return np.asarray(starts, dtype=np.int64)


_MAX_LENGTH_ROUNDS = 8
_REST = np.frombuffer(KEY_REST, dtype=np.uint8)


def _anchored_entry_starts(data: np.ndarray, tail: int) -> np.ndarray | None:
    """The entries' start offsets found column-wise when every key ends in KEY_REST (Hudi's keys): each
    KEY_REST ends a key's content, the entry starts 10 bytes and the content's length before it. The lengths
    tried are the first entry's, then in each round those where an entry found ends and the next KEY_REST says
    the next entry must start. The answer stands only when the entries found chain from byte 0 to the block's
    end, each one's lengths leading to the next: the walk's answer. None when that fails (another key layout,
    KEY_REST's bytes inside a value, too many rounds): the caller walks."""
    end = len(data)
    if end < 10 + len(_REST):
        return None
    rest_at = np.flatnonzero(data[1:end - len(_REST) + 2] == _REST[1])  # the timestamp's first byte, less one
    for i, byte in enumerate(_REST.tolist()):
        rest_at = rest_at[data[rest_at + i] == byte]
    if not len(rest_at):
        return None
    content_len = np.full(len(rest_at), -1, dtype=np.int64)
    lengths = {int(_short(data, np.array([8]))[0])}
    tried: set[int] = set()
    for _ in range(_MAX_LENGTH_ROUNDS):
        for length in sorted(lengths - tried):
            open_ = np.flatnonzero(content_len < 0)
            start = rest_at[open_] - 10 - length
            fits = start >= 0
            open_, start = open_[fits], start[fits]
            matches = (_short(data, start) == 0) & (_short(data, start + 2) == length + 12) & \
                (_short(data, start + 8) == length)
            content_len[open_[matches]] = length
        tried |= lengths
        known = content_len >= 0
        at = np.where(known, rest_at - 10 - content_len, 0)
        value_len = (_short(data, at + 4) << 16) | _short(data, at + 6)
        following = at + 8 + content_len + 12 + value_len + tail
        fine = known & (value_len < 1 << 31)  # a negative Java int
        fine[1:] &= fine[:-1] & (following[:-1] == at[1:])
        if fine.all() and at[0] == 0 and following[-1] == end:
            return at
        if not known[0] or at[0] != 0:
            return None
        # where a chained entry ends, the next one starts: its content runs from there to its KEY_REST
        after = np.flatnonzero(fine[:-1] & ~fine[1:])
        implied = rest_at[after + 1] - 10 - following[after]
        content_len[after + 1] = -1
        lengths = {int(x) for x in implied[implied >= 0]} - tried
        if not lengths:
            return None
    return None


def _short(data: np.ndarray, at: np.ndarray) -> np.ndarray:
    """The big-endian unsigned shorts at offsets `at` of `data`."""
    return (data[at].astype(np.int64) << 8) | data[at + 1]


def _gathered(payload: bytes, key_at: np.ndarray, key_len: np.ndarray, value_at: np.ndarray,
              value_len: np.ndarray) -> tuple[pa.Array, pa.Array]:
    """Binary columns of the keys and of the values at those byte ranges of `payload` (each key before its
    value, entries in order). The ranges and the gaps between them make one column over the payload's buffer
    (offsets key start, key end = gap start, value start, value end = next gap start), whose every second item
    Arrow takes."""
    n = len(key_at)
    offsets = np.empty(4 * n + 1, dtype=np.int64)
    offsets[0:4 * n:4] = key_at
    offsets[1:4 * n:4] = key_at + key_len
    offsets[2:4 * n:4] = value_at
    offsets[3:4 * n:4] = value_at + value_len
    offsets[4 * n] = offsets[4 * n - 1] if n else 0
    ranges = pa.LargeBinaryArray.from_buffers(pa.large_binary(), 4 * n, [None, pa.py_buffer(offsets),
                                                                         pa.py_buffer(payload)])
    every = np.arange(0, 4 * n, 2, dtype=np.int64).reshape(-1, 2) if n else np.zeros((0, 2), np.int64)
    return (ranges.take(pa.array(every[:, 0])).cast(pa.binary()),
            ranges.take(pa.array(every[:, 1])).cast(pa.binary()))
