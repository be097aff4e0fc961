"""Write an HFile (version 3) the way Hudi 1.1's native writer (HFileWriterImpl) does.

Layout: data blocks (sorted entries, cut at `block_size` uncompressed bytes), one meta block per named entry,
then the load-on-open section (root data index, meta index, file info) and the fixed 4096-byte trailer. A single
index level, as Hudi writes. Given the same entries, file info and creation time, the bytes equal Hudi 1.1's (the
reference tables' metadata files are reproduced exactly), with one deliberate difference for keys of 126 bytes and
more: their index entries carry the Hadoop VInt length that Hudi's and HBase's readers decode, where Hudi's writer
(hudi-io's HFileRootIndexBlock, as read) puts a protobuf varint, which differs from 128 on.
"""

from __future__ import annotations

import struct
import time

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import InvalidDataError
from hudi_ds.hfile.block import BlockType, Compression, encode_block
from hudi_ds.hfile.java_order import hash_map_order
from hudi_ds.hfile.keyvalue import MAX_KEY_CONTENT, encode_entries, entry_size, index_key
from hudi_ds.hfile.proto import (
    AVG_KEY_LEN,
    AVG_VALUE_LEN,
    CREATE_TIME_TS,
    KEY_VALUE_VERSION,
    KEY_VALUE_VERSION_WITH_MVCC_TS,
    LAST_KEY,
    MAX_MEMSTORE_TS_KEY,
    Trailer,
    delimited,
    encode_file_info,
)
from hudi_ds.hfile.varint import encode_hadoop_vint

DEFAULT_BLOCK_SIZE = 1024 * 1024  # hoodie.hfile.block.size
TRAILER_SIZE = 4096
MAJOR_VERSION = 3
COMPARATOR = "org.apache.hudi.io.storage.HoodieHBaseKVComparator"
PB_MAGIC = b"PBUF"
_INDEX_ENTRY = struct.Struct(">qi")
_INT = struct.Struct(">i")
_LONG = struct.Struct(">q")


class HFileWriter:
    """Collects sorted entries and returns the file's bytes from `finish()`.

    Keys are byte strings (Hudi writes UTF-8 record keys) in strictly increasing unsigned byte order;
    `block_size` bounds a data block's uncompressed size (an entry larger than it gets a block of its own);
    `created_ms` is the `hfile.CREATE_TIME_TS` file info (now when not given).
    """

    def __init__(self, block_size: int = DEFAULT_BLOCK_SIZE, compression: Compression = Compression.GZ,
                 created_ms: int | None = None) -> None:
        if block_size <= 0:
            raise InvalidDataError(f"HFile block size must be positive, got {block_size}")
        if compression not in (Compression.GZ, Compression.NONE):
            raise InvalidDataError(f"hudi_ds writes HFiles with GZ or NONE compression, not {compression.name}")
        self._block_size = block_size
        self._codec = compression
        self._created_ms = int(time.time() * 1000) if created_ms is None else created_ms
        self._parts: list[bytes] = []
        self._offset = 0
        # the open data block: columns of entries added together, then entries appended one by one after them
        self._block_columns: list[tuple[pa.Array, pa.Array]] = []
        self._block_loose: list[tuple[bytes, bytes]] = []
        self._block_bytes = 0
        self._index: list[tuple[bytes, int, int]] = []  # (first key, offset, on-disk size)
        self._last_key: bytes | None = None
        self._count = self._key_bytes = self._value_bytes = self._data_bytes = 0
        self._first_block_offset, self._last_block_offset = -1, 0
        self._file_info: dict[str, bytes] = {MAX_MEMSTORE_TS_KEY.decode(): _LONG.pack(0)}
        self._meta: dict[str, bytes] = {}
        self._finished = False

    def append(self, key: bytes, value: bytes) -> None:
        """Add one entry; its key must sort after the previous one."""
        if self._finished:
            raise ValueError("HFileWriter.append() after finish()")
        if self._last_key is not None and key <= self._last_key:
            raise InvalidDataError(f"HFile keys must be unique and ascending: {key!r} after {self._last_key!r}")
        if len(key) > MAX_KEY_CONTENT:
            raise InvalidDataError(f"HFile key of {len(key)} bytes is longer than the {MAX_KEY_CONTENT} allowed")
        size = entry_size(key, value)
        if self._block_bytes and self._block_bytes + size > self._block_size:
            self._flush_block()
        self._block_loose.append((key, value))
        self._block_bytes += size
        self._last_key = key
        self._count += 1
        self._key_bytes += len(key)
        self._value_bytes += len(value)

    def append_all(self, keys: pa.Array, values: pa.Array) -> None:
        """Add the entries of two binary columns, as `append` of each in turn would (the same blocks and bytes),
        without a Python object per entry: the block cuts come from the entries' cumulative sizes and each block
        is built from the columns' buffers."""
        if self._finished:
            raise ValueError("HFileWriter.append_all() after finish()")
        keys, values = keys.cast(pa.binary()), values.cast(pa.binary())
        n = len(keys)
        if n != len(values) or keys.null_count or values.null_count:
            raise InvalidDataError("HFile entries need one non-null key and value each")
        if not n:
            return
        key_len = pc.binary_length(keys).to_numpy(zero_copy_only=False).astype(np.int64)
        value_len = pc.binary_length(values).to_numpy(zero_copy_only=False).astype(np.int64)
        out_of_order = np.flatnonzero(pc.less_equal(keys[1:], keys[:-1]).to_numpy(zero_copy_only=False))
        first = keys[0].as_py()
        if self._last_key is not None and first <= self._last_key:
            raise InvalidDataError(f"HFile keys must be unique and ascending: {first!r} after {self._last_key!r}")
        if out_of_order.size:
            i = int(out_of_order[0])
            raise InvalidDataError(f"HFile keys must be unique and ascending: {keys[i + 1].as_py()!r} after "
                                   f"{keys[i].as_py()!r}")
        if int(key_len.max()) > MAX_KEY_CONTENT:
            raise InvalidDataError(f"HFile key of {int(key_len.max())} bytes is longer than the {MAX_KEY_CONTENT} "
                                   "allowed")
        ends = np.zeros(n + 1, dtype=np.int64)
        np.cumsum(key_len + value_len + entry_size(b"", b""), out=ends[1:])
        start = 0
        while start < n:
            # the entries from `start` that fit the open block; a first entry larger than a block takes one alone
            stop = int(np.searchsorted(ends, ends[start] + self._block_size - self._block_bytes, "right")) - 1
            if stop <= start:
                if self._block_bytes:
                    self._flush_block()
                    continue
                stop = start + 1
            self._seal_loose()
            self._block_columns.append((keys[start:stop], values[start:stop]))
            self._block_bytes += int(ends[stop] - ends[start])
            start = stop
        self._last_key = keys[n - 1].as_py()
        self._count += n
        self._key_bytes += int(key_len.sum())
        self._value_bytes += int(value_len.sum())

    def add_file_info(self, name: str, value: bytes) -> None:
        """Set a file info entry (Hudi keeps its Avro schema and record key range there)."""
        self._file_info[name] = value

    def add_meta_block(self, name: str, data: bytes) -> None:
        """Store `data` as a meta block looked up by `name` (Hudi's bloom filter is `bloomFilter`)."""
        self._meta[name] = data

    def _write(self, data: bytes) -> int:
        start = self._offset
        self._parts.append(data)
        self._offset += len(data)
        return start

    def _seal_loose(self) -> None:
        """Turn the entries appended one by one into a column of the open block (keeping their order)."""
        if self._block_loose:
            self._block_columns.append((pa.array([k for k, _ in self._block_loose], pa.binary()),
                                        pa.array([v for _, v in self._block_loose], pa.binary())))
            self._block_loose = []

    def _flush_block(self) -> None:
        self._seal_loose()
        keys = pa.concat_arrays([k for k, _ in self._block_columns])
        payload = encode_entries(keys, pa.concat_arrays([v for _, v in self._block_columns]))
        block = encode_block(BlockType.DATA, payload, self._codec)
        offset = self._write(block)
        if self._first_block_offset < 0:
            self._first_block_offset = offset
        self._last_block_offset = offset
        self._index.append((keys[0].as_py(), offset, len(block)))
        self._data_bytes += len(payload)
        self._block_columns, self._block_bytes = [], 0

    def finish(self) -> bytes:
        """The whole file. The writer is spent afterwards."""
        if self._finished:
            raise ValueError("HFileWriter.finish() was already called")
        self._finished = True
        if self._block_bytes:
            self._flush_block()
        meta_index = []
        for name in hash_map_order(self._meta):
            block = encode_block(BlockType.META, self._meta[name], self._codec)
            meta_index.append((name.encode("utf-8"), self._write(block), len(block)))
        load_on_open = self._offset
        root = b"".join(_INDEX_ENTRY.pack(offset, size) + encode_hadoop_vint(len(index_key(key))) + index_key(key)
                        for key, offset, size in self._index)
        self._write(encode_block(BlockType.ROOT_INDEX, root, self._codec))
        meta = b"".join(_INDEX_ENTRY.pack(offset, size) + encode_hadoop_vint(len(name)) + name
                        for name, offset, size in meta_index)
        self._write(encode_block(BlockType.ROOT_INDEX, meta, self._codec))
        file_info_offset = self._write(encode_block(BlockType.FILE_INFO, self._file_info_payload(), self._codec))
        trailer = Trailer(
            file_info_offset=file_info_offset, load_on_open_offset=load_on_open,
            uncompressed_data_index_size=self._data_bytes, data_index_count=len(self._index),
            meta_index_count=len(meta_index), entry_count=self._count, data_index_levels=1,
            first_data_block_offset=self._first_block_offset, last_data_block_offset=self._last_block_offset,
            comparator=COMPARATOR, codec=self._codec.value)
        head = BlockType.TRAILER.value + delimited(trailer.encode())
        self._write(head + bytes(TRAILER_SIZE - len(head) - 4) + _INT.pack(MAJOR_VERSION))
        data = b"".join(self._parts)
        self._parts = []
        return data

    def _file_info_payload(self) -> bytes:
        """PBUF magic and the delimited InfoProto, entries in Hudi's (HashMap) order."""
        n = self._count
        info = self._file_info
        info[LAST_KEY.decode()] = b"" if self._last_key is None else index_key(self._last_key)
        info[AVG_KEY_LEN.decode()] = _INT.pack(self._key_bytes // n if n else 0)
        info[CREATE_TIME_TS.decode()] = _LONG.pack(self._created_ms)
        info[AVG_VALUE_LEN.decode()] = _INT.pack(self._value_bytes // n if n else 0)
        info.setdefault(KEY_VALUE_VERSION.decode(), _INT.pack(KEY_VALUE_VERSION_WITH_MVCC_TS))
        entries = [(name.encode("utf-8"), info[name]) for name in hash_map_order(info)]
        return PB_MAGIC + delimited(encode_file_info(entries))
