"""HFile version 3 blocks: the 33-byte header, the (optionally compressed) payload, the checksum chunk space.

Header: magic (8), on-disk size without header (4), uncompressed size without header (4), previous block offset
(8), checksum type (1), bytes per checksum (4), on-disk data size with header (4). The checksum space after the
payload holds 4 bytes per `bytes_per_checksum` of header + payload. Hudi's writer leaves it zero under checksum
type NULL; HBase's writer fills it with CRC32C. Like Hudi's reader, this one does not verify them: a damaged
compressed block fails its gzip CRC instead, and every length and offset is checked against the file.
"""

from __future__ import annotations

import struct
import zlib
from dataclasses import dataclass
from enum import Enum

from hudi_ds.errors import CorruptTableError, UnsupportedTableError

HEADER_SIZE = 33
BYTES_PER_CHECKSUM = 16 * 1024
CHECKSUM_NULL = 0
_HEADER = struct.Struct(">8siiqbii")
# Java's GZIPOutputStream header: no name, mtime 0, no extra flags, OS byte 0 (Python's gzip writes 255)
_GZIP_HEADER = b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x00"
_GZIP_TAIL = struct.Struct("<II")


class BlockType(Enum):
    """Block magics (HBase BlockType); Hudi writes the first five, HBase's writer also the index levels."""

    DATA = b"DATABLK*"
    META = b"METABLKc"
    ROOT_INDEX = b"IDXROOT2"
    FILE_INFO = b"FILEINF2"
    TRAILER = b'TRABLK"$'
    LEAF_INDEX = b"IDXLEAF2"
    INTERMEDIATE_INDEX = b"IDXINTE2"
    ENCODED_DATA = b"DATABLKE"
    BLOOM_CHUNK = b"BLMFBLK2"
    GENERAL_BLOOM_META = b"BLMFMET2"
    DELETE_FAMILY_BLOOM_META = b"DFBLMET2"


class Compression(Enum):
    """Compression codec ids of the trailer (Hudi's CompressionCodec); Hudi writes GZ (the default of
    `hoodie.hfile.compression.algorithm`) or NONE."""

    LZO = 0
    GZ = 1
    NONE = 2
    SNAPPY = 3
    LZ4 = 4
    BZIP2 = 5
    ZSTD = 6


def codec_of(codec_id: int, path: str) -> Compression:
    """The trailer's codec, refused with a clear error when this reader cannot decompress it."""
    try:
        codec = Compression(codec_id)
    except ValueError:
        raise CorruptTableError(f"{path}: HFile trailer names unknown compression codec {codec_id}") from None
    if codec not in (Compression.GZ, Compression.NONE):
        raise UnsupportedTableError(
            f"{path}: HFile compressed with {codec.name}; hudi_ds reads GZ and NONE (Hudi's writers use GZ "
            "unless hoodie.hfile.compression.algorithm says otherwise): rewrite the file with one of those")
    return codec


def compress(payload: bytes, codec: Compression) -> bytes:
    """The on-disk payload: gzip as Java's GZIPOutputStream writes it (deflate level 6, the same bytes as Java's
    zlib), or the payload itself."""
    if codec is Compression.NONE:
        return payload
    deflate = zlib.compressobj(6, zlib.DEFLATED, -15)
    body = deflate.compress(payload) + deflate.flush()
    return _GZIP_HEADER + body + _GZIP_TAIL.pack(zlib.crc32(payload), len(payload) & 0xFFFFFFFF)


def checksum_space(on_disk_data_size_with_header: int) -> int:
    """Bytes of checksum after a block's payload: 4 per started `BYTES_PER_CHECKSUM` chunk."""
    return 4 * -(-on_disk_data_size_with_header // BYTES_PER_CHECKSUM)


def encode_block(block_type: BlockType, payload: bytes, codec: Compression) -> bytes:
    """One block as Hudi's writer lays it out: previous offset -1, checksum type NULL, zeroed checksum space."""
    stored = compress(payload, codec)
    with_header = HEADER_SIZE + len(stored)
    checksums = checksum_space(with_header)
    header = _HEADER.pack(block_type.value, len(stored) + checksums, len(payload), -1, CHECKSUM_NULL,
                          BYTES_PER_CHECKSUM, with_header)
    return header + stored + bytes(checksums)


@dataclass(frozen=True)
class Block:
    """A block read from a file: its type, where it starts, its whole on-disk length and its plain payload."""

    block_type: BlockType
    offset: int
    on_disk_size: int
    payload: bytes


def _parse_header(header: bytes | memoryview, offset: int, path: str) -> tuple[BlockType, int, int, int]:
    """(type, on-disk size without header, uncompressed size, on-disk data size with header) of the header of
    the block at file offset `offset`."""
    if len(header) < HEADER_SIZE:
        raise CorruptTableError(f"{path}: HFile block at byte {offset} is truncated")
    magic, on_disk, uncompressed, _, _, per_checksum, data_with_header = _HEADER.unpack_from(header, 0)
    try:
        block_type = BlockType(magic)
    except ValueError:
        raise CorruptTableError(f"{path}: no HFile block at byte {offset} (magic {magic!r})") from None
    if (on_disk < 0 or uncompressed < 0 or not HEADER_SIZE <= data_with_header <= HEADER_SIZE + on_disk
            or per_checksum <= 0):
        raise CorruptTableError(f"{path}: HFile block at byte {offset} has impossible sizes")
    return block_type, on_disk, uncompressed, data_with_header


def decode_block(raw: bytes | memoryview, offset: int, codec: Compression, path: str,
                 expected: tuple[BlockType, ...]) -> Block:
    """The block whose header starts `raw` (which holds at least the whole block), checked to be of one of the
    `expected` types and decompressed to exactly the size its header states."""
    block_type, on_disk, uncompressed, data_with_header = _parse_header(raw, offset, path)
    if block_type not in expected:
        names = " or ".join(t.name for t in expected)
        raise CorruptTableError(f"{path}: expected an HFile {names} block at byte {offset}, found {block_type.name}")
    if len(raw) < HEADER_SIZE + on_disk:
        raise CorruptTableError(f"{path}: HFile {block_type.name} block at byte {offset} runs past the file")
    stored = raw[HEADER_SIZE:data_with_header]
    if codec is Compression.NONE:
        payload = bytes(stored)
    else:
        try:
            payload = zlib.decompress(stored, 31)
        except zlib.error as exc:
            raise CorruptTableError(
                f"{path}: HFile {block_type.name} block at byte {offset} does not decompress ({exc})") from exc
    if len(payload) != uncompressed:
        raise CorruptTableError(f"{path}: HFile {block_type.name} block at byte {offset} holds {len(payload)} "
                                f"bytes, its header says {uncompressed}")
    return Block(block_type, offset, HEADER_SIZE + on_disk, payload)
