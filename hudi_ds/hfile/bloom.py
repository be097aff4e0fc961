"""Hudi's dynamic bounded bloom filter (type code DYNAMIC_V0), as its HFile base files carry it.

Hudi's base file writer stores the filter of the file's record keys in the `bloomFilter` meta block: the Base64
text of Hadoop's serialized DynamicBloomFilter (version -1, hash count, hash type 1 = Murmur, vector size, row
capacity, keys in the last row, row count, then each row's header and bits). A row takes `num_entries` keys; then
a new row opens, until rows x num_entries reaches `max_entries`, after which keys go round-robin over the rows.
Positions are Hadoop's MurmurHash (its original variant: big-endian, sign-extended tail bytes) chained
`hash_count` times from seed 0, each reduced as Java's `Math.abs(h % vector_size)`.
"""

from __future__ import annotations

import base64
import math
import struct
from collections.abc import Iterable

import numpy as np

from hudi_ds.errors import CorruptTableError, InvalidDataError

BLOOM_FILTER_META_BLOCK = "bloomFilter"
TYPE_CODE = "DYNAMIC_V0"
MURMUR_HASH = 1
_VERSION = -1
_M = np.uint32(0x5BD1E995)
_FILTER_HEADER = struct.Struct(">iibi")
_ROWS = struct.Struct(">iii")


def _murmur(keys: list[bytes], seeds: np.ndarray) -> np.ndarray:
    """Hadoop's 32-bit MurmurHash of equally long `keys`, each with its own seed (uint32 arrays)."""
    length = len(keys[0])
    raw = np.frombuffer(b"".join(keys), dtype=np.uint8).reshape(len(keys), length)
    h = seeds ^ np.uint32(length)
    words = length // 4
    if words:
        blocks = np.ascontiguousarray(raw[:, :words * 4]).view("<u4")
        for i in range(words):
            k = blocks[:, i] * _M
            k ^= k >> np.uint32(24)
            k *= _M
            h = (h * _M) ^ k
    # The tail bytes go in big-endian (the first one highest), unlike the 4-byte words, and sign-extended:
    # Java bytes are signed. Hadoop's later MurmurHash reversed this order; Hudi's filters use this one.
    tail = raw[:, words * 4:].astype(np.int8).astype(np.int32)
    left = tail.shape[1]
    if left:
        for i in range(left):
            h ^= (tail[:, i] << (8 * (left - 1 - i))).view(np.uint32)
        h *= _M
    h ^= h >> np.uint32(13)
    h *= _M
    h ^= h >> np.uint32(15)
    return h


def _positions(keys: list[bytes], hash_count: int, vector_size: int) -> np.ndarray:
    """The bit positions of each key (one row per key): `abs(h % vector_size)` of the chained hashes."""
    out = np.empty((len(keys), hash_count), dtype=np.int64)
    by_length: dict[int, list[int]] = {}
    for i, key in enumerate(keys):
        by_length.setdefault(len(key), []).append(i)
    with np.errstate(over="ignore"):
        for indices in by_length.values():
            group = [keys[i] for i in indices]
            h = np.zeros(len(group), dtype=np.uint32)
            for j in range(hash_count):
                h = _murmur(group, h)
                out[indices, j] = np.abs(np.fmod(h.view(np.int32).astype(np.int64), vector_size))
    return out


class BloomFilter:
    """A dynamic bounded bloom filter: `add_all` keys, then `serialize()` the meta block text."""

    type_code = TYPE_CODE

    def __init__(self, num_entries: int, fpp: float, max_entries: int) -> None:
        if num_entries <= 0 or not 0 < fpp < 1 or max_entries <= 0:
            raise InvalidDataError(f"bloom filter needs positive entries and 0 < fpp < 1, got {num_entries}, "
                                   f"{fpp}, {max_entries}")
        self.vector_size = math.ceil(num_entries * (-math.log(fpp) / (math.log(2) * math.log(2))))
        self.hash_count = math.ceil(math.log(2) * self.vector_size / num_entries)
        self.row_capacity = num_entries
        self.max_entries = max_entries
        self.rows = [np.zeros(self.vector_size, dtype=bool)]
        self.in_last_row = 0
        self._round_robin: int | None = None  # next row once the bound is reached

    def _row_for_next_key(self) -> int:
        if self._round_robin is not None:
            row = self._round_robin % len(self.rows)
            self._round_robin += 1
            return row
        if self.in_last_row >= self.row_capacity:
            if len(self.rows) * self.row_capacity < self.max_entries:
                self.rows.append(np.zeros(self.vector_size, dtype=bool))
                self.in_last_row = 0
            else:
                self._round_robin = 0
                return 0
        return len(self.rows) - 1

    def add_all(self, keys: Iterable[bytes]) -> None:
        """Add keys in order (the order decides which row each key lands in)."""
        batch = list(keys)
        if any(not key for key in batch):
            raise InvalidDataError("a bloom filter key must not be empty")
        if not batch:
            return
        positions = _positions(batch, self.hash_count, self.vector_size)
        for row_positions in positions:
            self.rows[self._row_for_next_key()][row_positions] = True
            self.in_last_row += 1

    def might_contain(self, key: bytes) -> bool:
        if not key:
            return True
        positions = _positions([key], self.hash_count, self.vector_size)[0]
        return any(bool(row[positions].all()) for row in self.rows)

    def serialize(self) -> bytes:
        """The meta block payload: Base64 of the Writable form."""
        header = _FILTER_HEADER.pack(_VERSION, self.hash_count, MURMUR_HASH, self.vector_size)
        parts = [header, _ROWS.pack(self.row_capacity, self.in_last_row, len(self.rows))]
        for row in self.rows:
            parts.append(header)
            parts.append(np.packbits(row, bitorder="little").tobytes())
        return base64.b64encode(b"".join(parts))

    @classmethod
    def deserialize(cls, text: bytes, what: str) -> BloomFilter:
        """A filter from its meta block payload (as Hudi wrote it), for membership tests. The key bound is not
        stored (Java's reader does not restore it either): this one takes the rows it found as its bound."""
        try:
            raw = base64.b64decode(text, validate=True)
            version, hash_count, hash_type, vector_size = _FILTER_HEADER.unpack_from(raw, 0)
            row_capacity, in_last_row, row_count = _ROWS.unpack_from(raw, _FILTER_HEADER.size)
        except (ValueError, struct.error) as exc:
            raise CorruptTableError(f"{what}: unreadable bloom filter ({exc})") from exc
        if version != _VERSION or hash_type != MURMUR_HASH or vector_size <= 0 or hash_count <= 0 or row_count < 1:
            raise CorruptTableError(f"{what}: bloom filter of an unknown layout (version {version}, hash type "
                                    f"{hash_type})")
        size = (vector_size + 7) // 8
        pos = _FILTER_HEADER.size + _ROWS.size
        if len(raw) != pos + row_count * (_FILTER_HEADER.size + size):
            raise CorruptTableError(f"{what}: bloom filter length does not match its {row_count} rows")
        out = cls.__new__(cls)
        out.vector_size, out.hash_count, out.row_capacity = vector_size, hash_count, row_capacity
        out.max_entries, out.in_last_row, out._round_robin = row_capacity * row_count, in_last_row, None
        out.rows = []
        for _ in range(row_count):
            bits = np.frombuffer(raw, dtype=np.uint8, count=size, offset=pos + _FILTER_HEADER.size)
            out.rows.append(np.unpackbits(bits, bitorder="little")[:vector_size].astype(bool))
            pos += _FILTER_HEADER.size + size
        return out
