"""Hudi log file block framing (spec §4.1, §4.2): magic, lengths, header map, content, reverse pointer.

A log file is a plain concatenation of blocks. Writers may crash mid-append, so the reader must turn damaged
regions into CORRUPT blocks (as Java's HoodieLogFileReader does) instead of failing the whole file; whether
such a block matters is decided by the caller from its instant time.
"""

from __future__ import annotations

import struct
from dataclasses import dataclass
from enum import IntEnum

from hudi_ds.errors import CorruptTableError, UnsupportedTableError

MAGIC = b"#HUDI#"
LOG_FORMAT_VERSION = 1
_Q = struct.Struct(">q")
_I = struct.Struct(">i")
_II = struct.Struct(">ii")
# version + type + header count + content length + footer count + reverse pointer: the smallest possible block
_MIN_BLOCK_LEN = 4 + 4 + 4 + 8 + 4 + 8


class BlockType(IntEnum):
    """Block type ordinals (HoodieLogBlock.HoodieLogBlockType)."""

    COMMAND = 0
    DELETE = 1
    CORRUPT = 2
    AVRO_DATA = 3
    HFILE_DATA = 4
    PARQUET_DATA = 5
    CDC_DATA = 6


class HeaderKey(IntEnum):
    """Header/footer metadata key ordinals (HoodieLogBlock.HeaderMetadataType)."""

    INSTANT_TIME = 0
    TARGET_INSTANT_TIME = 1
    SCHEMA = 2
    COMMAND_BLOCK_TYPE = 3
    COMPACTED_BLOCK_TIMES = 4
    RECORD_POSITIONS = 5
    BLOCK_IDENTIFIER = 6
    IS_PARTIAL = 7
    BASE_FILE_INSTANT_TIME_OF_RECORD_POSITIONS = 8


# Java 0.14 decodes header keys with values()[ordinal]: anything above 3 would crash it. IS_PARTIAL is written
# into version 9 tables only (partial updates), which no Hudi before 1.1 reads.
_WRITABLE_KEYS = frozenset({HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.SCHEMA,
                            HeaderKey.COMMAND_BLOCK_TYPE, HeaderKey.IS_PARTIAL})


@dataclass(frozen=True)
class LogBlock:
    """One block of a log file. `content` is a zero-copy view for valid blocks; for CORRUPT blocks it holds
    the raw bytes of the damaged region and `header` whatever could still be parsed."""

    block_type: BlockType
    header: dict[HeaderKey | int, str]
    content: bytes | memoryview
    offset: int
    size: int

    @property
    def instant_time(self) -> str | None:
        return self.header.get(HeaderKey.INSTANT_TIME)

    @property
    def target_instant_time(self) -> str | None:
        return self.header.get(HeaderKey.TARGET_INSTANT_TIME)

    @property
    def schema_json(self) -> str | None:
        return self.header.get(HeaderKey.SCHEMA)


def require_type(block: LogBlock, expected: BlockType, path: str) -> None:
    """Guard for decoders: a block handed to the wrong decoder is a caller bug, not file damage."""
    if block.block_type != expected:
        raise CorruptTableError(f"{path}: expected a {expected.name} block at byte {block.offset}, "
                          f"got {block.block_type.name}")


def _encode_metadata(meta: dict[HeaderKey, str]) -> bytes:
    parts = [_I.pack(len(meta))]
    for key in sorted(meta):
        if key not in _WRITABLE_KEYS:
            raise UnsupportedTableError(f"header key {key!r} must not be written: Hudi 0.14 crashes on ordinals > 3")
        value = meta[key].encode("utf-8")
        parts.append(_II.pack(int(key), len(value)))
        parts.append(value)
    return b"".join(parts)


def encode_block(block_type: BlockType, header: dict[HeaderKey, str], content: bytes) -> bytes:
    """Exact bytes of one block (spec §4.1/§4.8), empty footer, reverse pointer = blockLen + 6."""
    head = _encode_metadata(header)
    footer = _I.pack(0)
    block_len = 4 + 4 + len(head) + 8 + len(content) + len(footer) + 8
    return b"".join([
        MAGIC, _Q.pack(block_len), _I.pack(LOG_FORMAT_VERSION), _I.pack(int(block_type)), head,
        _Q.pack(len(content)), content, footer, _Q.pack(block_len + len(MAGIC)),
    ])


def _read_metadata(raw: bytes, pos: int, end: int) -> tuple[dict[HeaderKey | int, str], int, bool]:
    """(entries, position after the map, complete?) for a metadata map starting at `pos`, never reading past
    `end`. Unknown key ordinals are kept as ints so newer writers' headers do not break reading."""
    meta: dict[HeaderKey | int, str] = {}
    if pos + 4 > end:
        return meta, pos, False
    (count,) = _I.unpack_from(raw, pos)
    pos += 4
    if count < 0:
        return meta, pos, False
    for _ in range(count):
        if pos + 8 > end:
            return meta, pos, False
        key, length = _II.unpack_from(raw, pos)
        pos += 8
        if length < 0 or pos + length > end:
            return meta, pos, False
        try:
            value = raw[pos:pos + length].decode("utf-8")
        except UnicodeDecodeError:
            return meta, pos, False
        pos += length
        meta[HeaderKey(key) if 0 <= key < len(HeaderKey) else key] = value
    return meta, pos, True


def _corrupt(raw: bytes, mv: memoryview, start: int) -> LogBlock:
    """CORRUPT block from the magic at `start` up to the next magic (searched after this one, as Java does)
    or EOF; keeps the header entries still readable so the caller can tell which instant it belonged to."""
    nxt = raw.find(MAGIC, start + len(MAGIC))
    end = nxt if nxt >= 0 else len(raw)
    header: dict[HeaderKey | int, str] = {}
    if start + 22 <= end:
        header, _, _ = _read_metadata(raw, start + 22, end)
    return LogBlock(BlockType.CORRUPT, header, mv[start:end], start, end - start)


def _parse_block(raw: bytes, mv: memoryview, pos: int, path: str) -> LogBlock:
    """The block whose magic is at `pos`; damaged framing yields a CORRUPT block."""
    n = len(raw)
    if pos + 14 > n:
        return _corrupt(raw, mv, pos)
    (block_len,) = _Q.unpack_from(raw, pos + 6)
    end = pos + 14 + block_len
    # Java's check: the reverse pointer at the end must repeat the length, followed by a magic or EOF.
    if block_len < _MIN_BLOCK_LEN or end > n:
        return _corrupt(raw, mv, pos)
    if _Q.unpack_from(raw, end - 8)[0] - len(MAGIC) != block_len:
        return _corrupt(raw, mv, pos)
    if n - end >= len(MAGIC) and not raw.startswith(MAGIC, end):
        return _corrupt(raw, mv, pos)
    version, type_ord = _II.unpack_from(raw, pos + 14)
    header, q, ok = _read_metadata(raw, pos + 22, end - 8)
    if not ok or q + 8 > end - 8:
        return _corrupt(raw, mv, pos)
    (content_len,) = _Q.unpack_from(raw, q)
    c_start = q + 8
    c_end = c_start + content_len
    if content_len < 0 or c_end > end - 8:
        return _corrupt(raw, mv, pos)
    _, f_end, ok = _read_metadata(raw, c_end, end - 8)
    if not ok or f_end != end - 8:
        return _corrupt(raw, mv, pos)
    if version != LOG_FORMAT_VERSION:
        raise UnsupportedTableError(
            f"{path}: log block at byte {pos} uses log format version {version}; only version 1 is supported")
    if not 0 <= type_ord < len(BlockType):
        raise UnsupportedTableError(
            f"{path}: log block at byte {pos} has unknown block type {type_ord} (written by a newer Hudi); "
            "this version of hudi_ds cannot read it")
    return LogBlock(BlockType(type_ord), header, mv[c_start:c_end], pos, end - pos)


def read_blocks(data: bytes | bytearray | memoryview, path: str) -> list[LogBlock]:
    """All blocks of one log file, in file order. Truncated or damaged regions become CORRUPT blocks and the
    scan resumes at the next magic; this never raises for damage (only for intact blocks of an unknown
    format/type, which would otherwise be silently lost)."""
    raw = data if isinstance(data, bytes) else bytes(data)
    mv = memoryview(raw)
    blocks: list[LogBlock] = []
    pos, n = 0, len(raw)
    while pos < n:
        if raw.startswith(MAGIC, pos):
            block = _parse_block(raw, mv, pos, path)
        else:  # garbage before the first magic, or a partial magic at the tail
            nxt = raw.find(MAGIC, pos + 1)
            end = nxt if nxt >= 0 else n
            block = LogBlock(BlockType.CORRUPT, {}, mv[pos:end], pos, end - pos)
        blocks.append(block)
        pos += block.size
    return blocks
