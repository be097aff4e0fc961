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
import threading
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError, InvalidDataError

BLOOM_FILTER_META_BLOCK = "bloomFilter"
TYPE_CODE = "DYNAMIC_V0"
MURMUR_HASH = 1
_VERSION = -1
_M = np.uint32(0x5BD1E995)
_FILTER_HEADER = struct.Struct(">iibi")
_ROWS = struct.Struct(">iii")
_CHUNK_KEYS = 1 << 15  # keys hashed at a time (their positions: 4 MiB at Hudi's 30 hashes)


def _murmur_chain(raw: np.ndarray, hash_count: int) -> np.ndarray:
    """Hadoop's 32-bit MurmurHash of equally long keys (the rows of the uint8 matrix `raw`), chained `hash_count`
    times from seed 0: one row of uint32 hashes per round (a round's hashes lie together in memory). What a key's
    bytes contribute does not depend on the seed, so it is mixed once; each round then works in place."""
    n, length = raw.shape
    words = length // 4
    blocks = np.ascontiguousarray(raw[:, :words * 4]).view("<u4")
    mixed = []
    for i in range(words):
        k = blocks[:, i] * _M
        k ^= k >> np.uint32(24)
        k *= _M
        mixed.append(k)
    # The tail bytes go in big-endian (the first one highest), unlike the 4-byte words, and sign-extended:
    # Java bytes are signed. Hadoop's later MurmurHash reversed this order; Hudi's filters use this one.
    tail = raw[:, words * 4:].astype(np.int8).astype(np.int32)
    left = tail.shape[1]
    tail_bits = np.zeros(n, dtype=np.uint32)
    for i in range(left):
        tail_bits ^= (tail[:, i] << (8 * (left - 1 - i))).view(np.uint32)
    out = np.empty((hash_count, n), dtype=np.uint32)
    h = np.zeros(n, dtype=np.uint32)
    shifted = np.empty(n, dtype=np.uint32)
    for j in range(hash_count):
        h ^= np.uint32(length)
        for k in mixed:
            h *= _M
            h ^= k
        if left:
            h ^= tail_bits
            h *= _M
        np.right_shift(h, np.uint32(13), out=shifted)
        h ^= shifted
        h *= _M
        np.right_shift(h, np.uint32(15), out=shifted)
        h ^= shifted
        out[j] = h
    return out


def _positions(data: np.ndarray, offsets: np.ndarray, hash_count: int,
               vector_size: int) -> Iterator[tuple[np.ndarray, np.ndarray]]:
    """The bit positions of the keys, by key length: (the keys' indices, one column per key and one row per hash
    of `abs(h % vector_size)` of their chained hashes). Key `i` is the bytes `data[offsets[i]:offsets[i + 1]]`.
    Keys of one length hash together; their positions are not put back in key order (a row's bits do not
    depend on it)."""
    lengths = np.diff(offsets)
    order = np.argsort(lengths, kind="stable")
    starts = np.flatnonzero(np.diff(lengths[order], prepend=-1))
    size = np.uint32(vector_size)
    with np.errstate(over="ignore"):
        for indices in np.split(order, starts[1:]):
            raw = data[offsets[indices][:, None] + np.arange(lengths[indices[0]])]
            # Java's abs(h % size) is |h| % size; |h| of an int32 fits a uint32 (2**31 included). The remainder
            # as h - (h // size) * size: numpy divides by a scalar far faster than it takes a remainder.
            h = np.abs(_murmur_chain(raw, hash_count).view(np.int32)).view(np.uint32)
            h -= (h // size) * size
            yield indices, h


def _utf8_buffers(keys: pa.Array | pa.ChunkedArray) -> tuple[np.ndarray, np.ndarray]:
    """The UTF-8 bytes of string keys and their offsets (key `i` is `data[offsets[i]:offsets[i + 1]]`), from
    Arrow's buffers."""
    arr = keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys
    arr = pc.cast(arr, pa.large_string())
    if arr.null_count:
        raise InvalidDataError("a bloom filter key must not be null")
    _, offset_buf, data_buf = arr.buffers()
    offsets = np.frombuffer(offset_buf, dtype=np.int64)[arr.offset:arr.offset + len(arr) + 1]
    data = np.frombuffer(data_buf, dtype=np.uint8) if data_buf is not None else np.zeros(0, dtype=np.uint8)
    return data, offsets


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

    def _rows_for_next_keys(self, count: int) -> np.ndarray:
        """The row each of the next `count` keys lands in: the last row until it holds `num_entries`, then a new
        row while the bound allows, then round-robin over the rows (the first key at the bound, and the one after
        it, both to row 0, as Hudi's InternalDynamicBloomFilter does)."""
        out = np.empty(count, dtype=np.int64)
        done = 0
        while done < count:
            if self._round_robin is not None:
                out[done:] = (self._round_robin + np.arange(count - done)) % len(self.rows)
                self._round_robin += count - done
                self.in_last_row += count - done
                break
            if self.in_last_row >= self.row_capacity:
                if len(self.rows) * self.row_capacity < self.max_entries:
                    self.rows.append(np.zeros(self.vector_size, dtype=bool))
                    self.in_last_row = 0
                else:
                    self._round_robin = 0
                    out[done] = 0
                    self.in_last_row += 1
                    done += 1
                continue
            take = min(count - done, self.row_capacity - self.in_last_row)
            out[done:done + take] = len(self.rows) - 1
            self.in_last_row += take
            done += take
        return out

    def add_all(self, keys: Iterable[bytes]) -> None:
        """Add keys in order (the order decides which row each key lands in)."""
        batch = list(keys)
        offsets = np.zeros(len(batch) + 1, dtype=np.int64)
        np.cumsum(np.fromiter(map(len, batch), dtype=np.int64, count=len(batch)), out=offsets[1:])
        self._add(np.frombuffer(b"".join(batch), dtype=np.uint8), offsets)

    def add_strings(self, keys: pa.Array | pa.ChunkedArray) -> None:
        """Add the UTF-8 bytes of string keys in order, straight from Arrow's buffers."""
        self._add(*_utf8_buffers(keys))

    def _add(self, data: np.ndarray, offsets: np.ndarray) -> None:
        if len(offsets) < 2:
            return
        if not np.all(offsets[1:] > offsets[:-1]):
            raise InvalidDataError("a bloom filter key must not be empty")
        for start in range(0, len(offsets) - 1, _CHUNK_KEYS):  # bounded memory: hash_count positions per key
            part = offsets[start:start + _CHUNK_KEYS + 1]
            rows = self._rows_for_next_keys(len(part) - 1)
            one_row = rows[0] == rows[-1] and self._round_robin is None  # no round-robin: rows[i] never falls
            for indices, positions in _positions(data, part, self.hash_count, self.vector_size):
                # numpy indexes by intp: cast once (it would convert uint32 indices element by element)
                if one_row:
                    self.rows[rows[0]][positions.ravel().astype(np.intp)] = True
                    continue
                of_keys = rows[indices]
                for row in np.unique(of_keys):
                    self.rows[row][positions[:, of_keys == row].ravel().astype(np.intp)] = True

    @property
    def key_count(self) -> int:
        """The keys added: the full rows before the last and the last row's count (which goes on counting once
        keys go round-robin), as Java's filter counts them."""
        return (len(self.rows) - 1) * self.row_capacity + self.in_last_row

    @classmethod
    def extendable(cls, text: bytes, what: str, num_entries: int, fpp: float, max_entries: int) -> BloomFilter | None:
        """The filter of a file (its meta block payload) ready to take more keys as a filter of these settings
        would, so a rewrite of the file adds only its new keys instead of hashing every key again. None when it was
        built with other settings (a key would not land where such a filter puts it). CorruptTableError when it
        cannot be read."""
        fresh = cls(num_entries, fpp, max_entries)
        old = cls.deserialize(text, what)
        if ((old.vector_size, old.hash_count, old.row_capacity) != (fresh.vector_size, fresh.hash_count,
                                                                     fresh.row_capacity)
                or len(old.rows) * old.row_capacity >= max_entries + old.row_capacity or old.in_last_row < 0):
            return None
        old.max_entries = max_entries
        if old.in_last_row > old.row_capacity:  # round-robin since the key after the bound
            if len(old.rows) * old.row_capacity < max_entries:
                return None  # Java's filter opens a new row there instead
            old._round_robin = old.in_last_row - old.row_capacity - 1
        return old

    def might_contain(self, key: bytes) -> bool:
        if not key:
            return True
        [(_, positions)] = _positions(np.frombuffer(key, dtype=np.uint8), np.array([0, len(key)]),
                                      self.hash_count, self.vector_size)
        positions = positions[:, 0]
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
        bits = FilterBits.read(text, what)
        out = cls.__new__(cls)
        out.vector_size, out.hash_count, out.row_capacity = bits.vector_size, bits.hash_count, bits.row_capacity
        out.in_last_row, out._round_robin = bits.in_last_row, None
        out.max_entries = bits.row_capacity * bits.row_count
        out.rows = [np.unpackbits(row, bitorder="little")[:bits.vector_size].view(bool) for row in bits.packed_rows()]
        return out


_BASE64 = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/"
_SEXTET = np.full(256, 255, dtype=np.uint8)  # a Base64 character's 6 bits (255: not one)
_SEXTET[np.frombuffer(_BASE64, dtype=np.uint8)] = np.arange(64, dtype=np.uint8)
_SEXTET[ord("=")] = 0
_TEST_KEYS = 8192  # keys whose bits are looked up at a time


@dataclass(frozen=True)
class FilterBits:
    """A filter as stored, for membership tests: its Base64 text, of which a test decodes only the bytes holding
    the bits it looks at (a file's filter is ~0.9 MB of text at Hudi's defaults, a key's bits a few dozen bytes).
    Bit `p` of a row is bit `p % 8`, the lowest first, of the row's byte `p // 8`."""

    hash_count: int
    vector_size: int
    row_capacity: int
    in_last_row: int
    row_count: int
    text: np.ndarray  # the Base64 characters
    what: str  # the file, for errors

    @classmethod
    def read(cls, text: bytes, what: str) -> FilterBits:
        """The filter of a meta block payload (Base64 of the Writable form); CorruptTableError naming `what`."""
        chars = np.frombuffer(text, dtype=np.uint8)
        try:
            head = base64.b64decode(text[:36])  # the 25 bytes of the headers
            version, hash_count, hash_type, vector_size = _FILTER_HEADER.unpack_from(head, 0)
            row_capacity, in_last_row, row_count = _ROWS.unpack_from(head, _FILTER_HEADER.size)
        except (ValueError, struct.error) as exc:
            raise CorruptTableError(f"{what}: unreadable bloom filter ({exc})") from exc
        if version != _VERSION or hash_type != MURMUR_HASH or vector_size <= 0 or hash_count <= 0 or row_count < 1:
            raise CorruptTableError(f"{what}: bloom filter of an unknown layout (version {version}, hash type "
                                    f"{hash_type})")
        length = _FILTER_HEADER.size + _ROWS.size + row_count * (_FILTER_HEADER.size + (vector_size + 7) // 8)
        if len(chars) != 4 * -(-length // 3):
            raise CorruptTableError(f"{what}: bloom filter length does not match its {row_count} rows")
        return cls(hash_count, vector_size, row_capacity, in_last_row, row_count, chars, what)

    def _row_start(self, row: int) -> int:
        return _FILTER_HEADER.size + _ROWS.size + row * (_FILTER_HEADER.size + (self.vector_size + 7) // 8) \
            + _FILTER_HEADER.size

    def packed_rows(self) -> list[np.ndarray]:
        """Each row's bytes, the whole text decoded."""
        size = (self.vector_size + 7) // 8
        try:  # lenient: a character outside Base64 is dropped, and the length no longer matches
            raw = np.frombuffer(base64.b64decode(self.text.tobytes()), dtype=np.uint8)
        except ValueError as exc:
            raise CorruptTableError(f"{self.what}: unreadable bloom filter ({exc})") from exc
        if len(raw) != self._row_start(self.row_count - 1) + size:
            raise CorruptTableError(f"{self.what}: unreadable bloom filter (not Base64)")
        return [raw[self._row_start(r):self._row_start(r) + size] for r in range(self.row_count)]

    def _bytes_at(self, offsets: np.ndarray) -> np.ndarray:
        """The decoded bytes at these offsets: each from the four characters that encode its group of three
        (CorruptTableError if one is not Base64)."""
        first = offsets // 3 * 4
        group = np.zeros(offsets.shape, dtype=np.uint32)
        for i in range(4):
            sextets = _SEXTET[self.text[first + i]]
            if (sextets == 255).any():
                raise CorruptTableError(f"{self.what}: unreadable bloom filter (not Base64)")
            group = (group << np.uint32(6)) | sextets
        return ((group >> (np.uint32(16) - (offsets % 3).astype(np.uint32) * np.uint32(8))) & np.uint32(255))

    def might_contain(self, probe: KeyPositions, among: np.ndarray | None = None) -> np.ndarray:
        """For each key of `probe` (the keys at the positions `among`, if given), whether the filter might
        contain it. CorruptTableError where the text it looks at is not Base64."""
        at = probe.of(self.hash_count, self.vector_size)
        out = probe.empty.copy()
        if among is not None:
            at, out = at[:, among], out[among]
        for start in range(0, at.shape[1], _TEST_KEYS):  # bounded memory: a few int64 per bit looked at
            part = at[:, start:start + _TEST_KEYS].astype(np.int64)
            byte, bit = part >> 3, (part & 7).astype(np.uint32)
            for row in range(self.row_count):
                held = (self._bytes_at(byte + self._row_start(row)) >> bit) & np.uint32(1)
                out[start:start + _TEST_KEYS] |= held.all(axis=0)
        return out


class KeyPositions:
    """String keys hashed once for each filter size asked (the filters of one table share Hudi's default size):
    their bit positions, one column per key, one row per hash."""

    def __init__(self, keys: pa.Array | pa.ChunkedArray) -> None:
        self._data, self._offsets = _utf8_buffers(keys)
        self.empty = self._offsets[1:] == self._offsets[:-1]  # an empty key: might be contained (might_contain)
        self._positions: dict[tuple[int, int], np.ndarray] = {}
        self._lock = threading.Lock()  # files are tested on several threads: the keys hash once

    def of(self, hash_count: int, vector_size: int) -> np.ndarray:
        with self._lock:
            found = self._positions.get((hash_count, vector_size))
            if found is None:
                found = np.zeros((hash_count, len(self.empty)), dtype=np.uint32)
                if len(self.empty):
                    for indices, positions in _positions(self._data, self._offsets, hash_count, vector_size):
                        found[:, indices] = positions
                self._positions[(hash_count, vector_size)] = found
            return found
