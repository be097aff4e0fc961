"""Read an HFile (version 3) written by Hudi's native writer or by HBase's (Hudi 1.0 and older).

Opening reads the trailer and the load-on-open section (data index, meta index, file info); data blocks are read
and decoded on demand, so a point lookup in a large file costs one block read. The source is the file's bytes or
a random-access `pyarrow.NativeFile` (`Storage.open_input`), which object stores serve with ranged GETs.
Everything read is untrusted: damage raises `CorruptTableError` naming the file, never wrong entries.
"""

from __future__ import annotations

import bisect
import functools
import struct
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError, UnsupportedTableError
from hudi_ds.hfile.block import HEADER_SIZE, Block, BlockType, Compression, codec_of, decode_block
from hudi_ds.hfile.keyvalue import decode_entries, key_content
from hudi_ds.hfile.proto import (
    KEY_VALUE_VERSION,
    KEY_VALUE_VERSION_WITH_MVCC_TS,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    Trailer,
    decode_file_info,
    read_delimited,
)
from hudi_ds.hfile.varint import decode_hadoop_vint
from hudi_ds.hfile.writer import MAJOR_VERSION, PB_MAGIC, TRAILER_SIZE

_INDEX_ENTRY = struct.Struct(">qi")
_INT = struct.Struct(">i")
_CACHED_BLOCKS = 8
_MAX_INDEX_LEVELS = 8


@dataclass(frozen=True)
class IndexEntry:
    """A block the index points at: the lowest key it may hold, where it is, its on-disk length."""

    key: bytes
    offset: int
    size: int


@dataclass(frozen=True)
class DataBlock:
    """The entries of a data block as binary columns (for selecting many at once), and as lists when first
    asked for (for bisecting and scans)."""

    key_column: pa.Array
    value_column: pa.Array

    @functools.cached_property
    def keys(self) -> list[bytes]:
        return self.key_column.to_pylist()

    @functools.cached_property
    def values(self) -> list[bytes]:
        return self.value_column.to_pylist()


class HFileReader:
    """Entries of one HFile, looked up by key or scanned in key order (unsigned byte order of the keys)."""

    def __init__(self, source: bytes | bytearray | memoryview | pa.NativeFile, path: str) -> None:
        self.path = path
        if isinstance(source, pa.NativeFile):
            self._file: pa.NativeFile | None = source
            self._data: bytes = b""
            self.size = source.size()
        else:
            self._file = None
            self._data = bytes(source)
            self.size = len(self._data)
        self._cache: OrderedDict[int, DataBlock] = OrderedDict()
        self.trailer = self._read_trailer()
        self.compression: Compression = codec_of(self.trailer.codec, path)
        self._load_on_open()

    # ------------------------------------------------------------------------------------------ opening

    def _read(self, offset: int, length: int) -> bytes:
        if offset < 0 or length < 0 or offset + length > self.size:
            raise CorruptTableError(f"{self.path}: HFile points at bytes {offset}..{offset + length}, past its "
                                    f"end ({self.size} bytes)")
        if self._file is None:
            return self._data[offset:offset + length]
        data = self._file.read_at(length, offset)
        if len(data) != length:
            raise CorruptTableError(f"{self.path}: short read at byte {offset}: the file changed while read")
        return bytes(data)

    def _read_trailer(self) -> Trailer:
        if self.size < TRAILER_SIZE:
            raise CorruptTableError(f"{self.path}: {self.size} bytes is too short for an HFile (its trailer "
                                    f"alone takes {TRAILER_SIZE})")
        raw = self._read(self.size - TRAILER_SIZE, TRAILER_SIZE)
        if raw[:8] != BlockType.TRAILER.value:
            raise CorruptTableError(f"{self.path}: not an HFile (no trailer magic at byte {self.size - TRAILER_SIZE})")
        (version,) = _INT.unpack_from(raw, TRAILER_SIZE - 4)
        if version & 0xFFFFFF != MAJOR_VERSION:
            raise UnsupportedTableError(f"{self.path}: HFile version {version & 0xFFFFFF}; Hudi and hudi_ds use "
                                        f"version {MAJOR_VERSION}")
        trailer = Trailer.decode(read_delimited(raw[:-4], 8, f"{self.path} trailer"), f"{self.path} trailer")
        body = self.size - TRAILER_SIZE
        if not 0 <= trailer.load_on_open_offset <= trailer.file_info_offset < body:
            raise CorruptTableError(f"{self.path}: HFile trailer offsets point outside the file")
        if trailer.data_index_count and not 1 <= trailer.data_index_levels <= _MAX_INDEX_LEVELS:
            raise CorruptTableError(f"{self.path}: HFile trailer states {trailer.data_index_levels} index levels")
        return trailer

    def _load_on_open(self) -> None:
        """Root data index, meta index and file info: consecutive blocks from the load-on-open offset."""
        start = self.trailer.load_on_open_offset
        section = self._read(start, self.size - TRAILER_SIZE - start)
        expected = (BlockType.ROOT_INDEX,)
        root = decode_block(section, start, self.compression, self.path, expected)
        meta = decode_block(section[root.on_disk_size:], start + root.on_disk_size, self.compression, self.path,
                            expected)
        info_at = self.trailer.file_info_offset - start
        info = decode_block(section[info_at:], self.trailer.file_info_offset, self.compression, self.path,
                            (BlockType.FILE_INFO,))
        self.file_info = self._parse_file_info(info)
        version = self.file_info.get(KEY_VALUE_VERSION)
        self._mvcc = version is not None and len(version) == 4 and \
            _INT.unpack(version)[0] == KEY_VALUE_VERSION_WITH_MVCC_TS
        max_ts = self.file_info.get(MAX_MEMSTORE_TS_KEY, b"")
        if self._mvcc and any(max_ts):
            raise UnsupportedTableError(f"{self.path}: HFile holds MVCC-versioned entries (HBase data), which "
                                        "Hudi never writes")
        # a multi-level root index ends with HBase's mid-key metadata (offset, size, entry number)
        trailing = (0,) if self.trailer.data_index_levels <= 1 else (0, 16)
        self.index = self._data_index(self._root_entries(root.payload, self.trailer.data_index_count, trailing))
        self.meta_index = {entry.key: entry for entry in
                           self._root_entries(meta.payload, self.trailer.meta_index_count, (0,), content_key=False)}
        self._first_keys = [entry.key for entry in self.index]

    def _parse_file_info(self, block: Block) -> dict[bytes, bytes]:
        what = f"{self.path} file info"
        if block.payload[:4] != PB_MAGIC:
            raise CorruptTableError(f"{what}: missing PBUF magic")
        return decode_file_info(read_delimited(block.payload, 4, what), what)

    def _root_entries(self, payload: bytes, count: int, trailing: tuple[int, ...],
                      content_key: bool = True) -> list[IndexEntry]:
        """`count` root index entries (offset, on-disk size, VInt key length, key), which must fill the block
        but for `trailing` bytes: a wrong count would silently hide blocks."""
        what = f"{self.path} index"
        entries, pos = [], 0
        for _ in range(count):
            if pos + 12 > len(payload):
                raise CorruptTableError(f"{what}: fewer entries than the trailer's {count}")
            offset, size = _INDEX_ENTRY.unpack_from(payload, pos)
            length, pos = decode_hadoop_vint(payload, pos + 12, what)
            if length < 0 or pos + length > len(payload):
                raise CorruptTableError(f"{what}: key length {length} runs past the index block")
            key = payload[pos:pos + length]
            pos += length
            entries.append(IndexEntry(key_content(key, what) if content_key else key, offset, size))
        if len(payload) - pos not in trailing:
            raise CorruptTableError(f"{what}: the index block holds more than the trailer's {count} entries")
        return entries

    def _data_index(self, root: list[IndexEntry]) -> list[IndexEntry]:
        """The data block entries, walking down HBase's intermediate and leaf index levels when there are any."""
        level = root
        for _ in range(self.trailer.data_index_levels - 1):
            below: list[IndexEntry] = []
            for entry in level:
                block = self._block(entry, (BlockType.INTERMEDIATE_INDEX, BlockType.LEAF_INDEX))
                below.extend(self._non_root_entries(block.payload))
            level = below
        keys = [entry.key for entry in level]
        if any(a > b for a, b in zip(keys, keys[1:], strict=False)):
            raise CorruptTableError(f"{self.path}: HFile data index keys are out of order")
        ends = [entry.offset + entry.size for entry in level]
        if any(later.offset < end for later, end in zip(level[1:], ends, strict=False)) or \
                (level and (level[0].offset < 0 or ends[-1] > self.trailer.load_on_open_offset)):
            raise CorruptTableError(f"{self.path}: HFile data blocks overlap or run into the index")
        return level

    def _non_root_entries(self, payload: bytes) -> list[IndexEntry]:
        """A leaf or intermediate index block: entry count, the entries' relative offsets (count + 1), entries
        of offset, on-disk size and key (its length implied by the next offset)."""
        what = f"{self.path} index"
        if len(payload) < 4:
            raise CorruptTableError(f"{what}: truncated non-root index block")
        (count,) = _INT.unpack_from(payload, 0)
        base = 4 + 4 * (count + 1)
        if count < 0 or base > len(payload):
            raise CorruptTableError(f"{what}: non-root index block states {count} entries")
        offsets = struct.unpack_from(f">{count + 1}i", payload, 4)
        entries = []
        for i in range(count):
            start, end = base + offsets[i], base + offsets[i + 1]
            if not base <= start <= end - 12 or end > len(payload):
                raise CorruptTableError(f"{what}: non-root index entry {i} runs past its block")
            offset, size = _INDEX_ENTRY.unpack_from(payload, start)
            entries.append(IndexEntry(key_content(payload[start + 12:end], what), offset, size))
        return entries

    # ------------------------------------------------------------------------------------------ reading

    def _block(self, entry: IndexEntry, expected: tuple[BlockType, ...]) -> Block:
        if entry.size < HEADER_SIZE:
            raise CorruptTableError(f"{self.path}: index entry for byte {entry.offset} states {entry.size} bytes")
        raw = self._read(entry.offset, entry.size)
        return decode_block(raw, entry.offset, self.compression, self.path, expected)

    def _entries(self, block_number: int) -> DataBlock:
        """The entries of one data block, checked to be in order and between its index key and the next one's
        (equal keys may repeat, and HBase's writer may split a run of them across blocks)."""
        cached = self._cache.get(block_number)
        if cached is not None:
            self._cache.move_to_end(block_number)
            return cached
        entry = self.index[block_number]
        block = self._block(entry, (BlockType.DATA,))
        key_column, value_column = decode_entries(block.payload, f"{self.path} block at byte {entry.offset}",
                                                  self._mvcc)
        upper = self._first_keys[block_number + 1] if block_number + 1 < len(self.index) else None
        if not len(key_column) or key_column[0].as_py() < entry.key or \
                (upper is not None and key_column[-1].as_py() > upper) or \
                pc.any(pc.greater(key_column[:-1], key_column[1:])).as_py():
            raise CorruptTableError(f"{self.path}: data block at byte {entry.offset} holds keys out of order or "
                                    "outside its index range")
        cached = DataBlock(key_column, value_column)
        self._cache[block_number] = cached
        if len(self._cache) > _CACHED_BLOCKS:
            self._cache.popitem(last=False)
        return cached

    @property
    def entry_count(self) -> int:
        return self.trailer.entry_count

    @property
    def last_key(self) -> bytes | None:
        """The file's last key (from file info), None for an empty file."""
        raw = self.file_info.get(LAST_KEY, b"")
        return key_content(raw, f"{self.path} file info") if raw else None

    def get(self, key: bytes) -> bytes | None:
        """The value stored under `key` (the first one, should the file repeat the key), or None."""
        for found, value in self.scan(key):
            return value if found == key else None
        return None

    def get_many(self, keys: Iterable[bytes]) -> dict[bytes, bytes]:
        """The present ones of `keys` with their values (each data block read once when `keys` are sorted)."""
        out: dict[bytes, bytes] = {}
        for key in keys:
            value = self.get(key)
            if value is not None:
                out[key] = value
        return out

    def scan(self, start: bytes | None = None, stop: bytes | None = None) -> Iterator[tuple[bytes, bytes]]:
        """Entries with start <= key < stop (either bound open when None), in key order."""
        # the block before the first whose index key reaches `start`: a run of equal keys may begin there
        first = 0 if start is None else max(bisect.bisect_left(self._first_keys, start) - 1, 0)
        for block_number in range(first, len(self.index)):
            if stop is not None and self._first_keys[block_number] >= stop:
                return
            block = self._entries(block_number)
            keys, values = block.keys, block.values
            i = 0 if start is None else bisect.bisect_left(keys, start)
            for j in range(i, len(keys)):
                if stop is not None and keys[j] >= stop:
                    return
                yield keys[j], values[j]

    def scan_prefix(self, prefix: bytes) -> Iterator[tuple[bytes, bytes]]:
        """Entries whose key starts with `prefix`, in key order."""
        for key, value in self.scan(prefix):
            if not key.startswith(prefix):
                return
            yield key, value

    def __iter__(self) -> Iterator[tuple[bytes, bytes]]:
        """Every entry in key order; the count must match the trailer's."""
        count = 0
        for entry in self.scan():
            count += 1
            yield entry
        if count != self.trailer.entry_count:
            raise CorruptTableError(f"{self.path}: HFile holds {count} entries, its trailer says "
                                    f"{self.trailer.entry_count}")

    def select(self, keys: pa.Array) -> Iterator[tuple[bytes, bytes]]:
        """The entries whose key is one of `keys` (a binary column), in key order: one pass over the data blocks,
        each block's keys matched at once."""
        count = 0
        for block_number in range(len(self.index)):
            block = self._entries(block_number)
            count += len(block.keys)
            for i in np.flatnonzero(pc.is_in(block.key_column, keys).to_numpy(zero_copy_only=False)).tolist():
                yield block.keys[i], block.values[i]
        if count != self.trailer.entry_count:
            raise CorruptTableError(f"{self.path}: HFile holds {count} entries, its trailer says "
                                    f"{self.trailer.entry_count}")

    def select_columns(self, keys: pa.Array | None = None) -> tuple[pa.Array, pa.Array]:
        """(keys, values) of the entries whose key is one of `keys` (a binary column; None: every entry), in key
        order, as binary columns: only the data blocks whose key range holds one of `keys` are read (when
        `keys` are fewer than the blocks: more touch about every block, and sorting them would cost more than
        reading the rest), each matched at once."""
        wanted = None if keys is None or len(keys) >= len(self.index) else sorted(set(keys.to_pylist()))
        found_keys: list[pa.Array] = [pa.array([], pa.binary())]
        found_values: list[pa.Array] = [pa.array([], pa.binary())]
        for block_number in range(len(self.index)):
            upper = self._first_keys[block_number + 1] if block_number + 1 < len(self.index) else None
            if wanted is not None:
                below = len(wanted) if upper is None else bisect.bisect_right(wanted, upper)
                if bisect.bisect_left(wanted, self._first_keys[block_number]) >= below:
                    continue  # equal keys may run on into the next block: its first key counts for this one too
            block = self._entries(block_number)
            if keys is None:
                found_keys.append(block.key_column)
                found_values.append(block.value_column)
                continue
            mask = pc.is_in(block.key_column, keys)
            found_keys.append(block.key_column.filter(mask))
            found_values.append(block.value_column.filter(mask))
        key_column, value_column = pa.concat_arrays(found_keys), pa.concat_arrays(found_values)
        if keys is None and len(key_column) != self.trailer.entry_count:
            raise CorruptTableError(f"{self.path}: HFile holds {len(key_column)} entries, its trailer says "
                                    f"{self.trailer.entry_count}")
        return key_column, value_column

    def meta_block(self, name: bytes) -> bytes | None:
        """The payload of the meta block stored under `name`, or None."""
        entry = self.meta_index.get(name)
        return None if entry is None else self._block(entry, (BlockType.META,)).payload
