"""The two protobuf messages of an HFile: the trailer (`TrailerProto`) and the file info (`InfoProto`).

A dozen scalar fields do not justify a protobuf dependency: this is the wire format (varint and length-delimited
fields) for exactly the fields HFile version 3 defines. Unknown fields are skipped, as protobuf readers do.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

from hudi_ds.errors import CorruptTableError
from hudi_ds.hfile.varint import decode_uvarint, encode_uvarint

_VARINT, _I64, _LEN, _I32 = 0, 1, 2, 5


def _fields(data: bytes | memoryview, what: str) -> Iterator[tuple[int, int | bytes]]:
    """(field number, value) pairs of a message: ints for varints, bytes for length-delimited fields."""
    pos, end = 0, len(data)
    while pos < end:
        tag, pos = decode_uvarint(data, pos, what)
        number, wire = tag >> 3, tag & 7
        if wire == _VARINT:
            value, pos = decode_uvarint(data, pos, what)
            yield number, value
        elif wire == _LEN:
            size, pos = decode_uvarint(data, pos, what)
            if pos + size > end:
                raise CorruptTableError(f"{what}: field {number} runs past the message")
            yield number, bytes(data[pos:pos + size])
            pos += size
        elif wire in (_I64, _I32):
            pos += 8 if wire == _I64 else 4
        else:
            raise CorruptTableError(f"{what}: unknown protobuf wire type {wire}")
    if pos != end:
        raise CorruptTableError(f"{what}: a field runs past the message")


def _varint_field(number: int, value: int) -> bytes:
    return encode_uvarint(number << 3 | _VARINT) + encode_uvarint(value)


def _bytes_field(number: int, value: bytes) -> bytes:
    return encode_uvarint(number << 3 | _LEN) + encode_uvarint(len(value)) + value


def delimited(message: bytes) -> bytes:
    """A message prefixed by its varint length (`writeDelimitedTo`)."""
    return encode_uvarint(len(message)) + message


def read_delimited(data: bytes | memoryview, pos: int, what: str) -> bytes:
    """The message that `delimited` wrote at `pos`."""
    size, start = decode_uvarint(data, pos, what)
    if start + size > len(data):
        raise CorruptTableError(f"{what}: message length {size} runs past its block")
    return bytes(data[start:start + size])


@dataclass(frozen=True)
class Trailer:
    """TrailerProto: where the load-on-open section, file info and data blocks are, and how many entries."""

    file_info_offset: int
    load_on_open_offset: int
    uncompressed_data_index_size: int
    data_index_count: int
    meta_index_count: int
    entry_count: int
    data_index_levels: int
    first_data_block_offset: int  # -1 when the file has no data block
    last_data_block_offset: int
    comparator: str
    codec: int
    total_uncompressed_bytes: int | None = None  # HBase's writer sets it, Hudi's does not

    def encode(self) -> bytes:
        """Fields in number order, as Java's generated code writes them (Hudi's writer sets all but 4 and 13)."""
        parts = [_varint_field(1, self.file_info_offset), _varint_field(2, self.load_on_open_offset),
                 _varint_field(3, self.uncompressed_data_index_size)]
        if self.total_uncompressed_bytes is not None:
            parts.append(_varint_field(4, self.total_uncompressed_bytes))
        parts += [_varint_field(5, self.data_index_count), _varint_field(6, self.meta_index_count),
                  _varint_field(7, self.entry_count), _varint_field(8, self.data_index_levels),
                  _varint_field(9, self.first_data_block_offset), _varint_field(10, self.last_data_block_offset),
                  _bytes_field(11, self.comparator.encode("utf-8")), _varint_field(12, self.codec)]
        return b"".join(parts)

    @classmethod
    def decode(cls, message: bytes, what: str) -> Trailer:
        values: dict[int, int | bytes] = dict(_fields(message, what))

        def number(field: int, default: int = 0) -> int:
            value = values.get(field, default)
            if not isinstance(value, int):
                raise CorruptTableError(f"{what}: trailer field {field} is not a number")
            return value

        def signed(field: int) -> int:  # offsets Java wrote from a long: -1 arrives as 2**64 - 1
            value = number(field)
            return value - (1 << 64) if value >= 1 << 63 else value

        comparator = values.get(11, b"")
        total = values.get(4)
        return cls(
            file_info_offset=number(1), load_on_open_offset=number(2), uncompressed_data_index_size=number(3),
            data_index_count=number(5), meta_index_count=number(6), entry_count=number(7),
            data_index_levels=number(8), first_data_block_offset=signed(9), last_data_block_offset=signed(10),
            comparator=comparator.decode("utf-8", "replace") if isinstance(comparator, bytes) else "",
            codec=number(12, 2), total_uncompressed_bytes=total if isinstance(total, int) else None)


def encode_file_info(entries: list[tuple[bytes, bytes]]) -> bytes:
    """InfoProto: a repeated BytesBytesPair (first = 1, second = 2) per entry, in the given order."""
    return b"".join(_bytes_field(1, _bytes_field(1, name) + _bytes_field(2, value)) for name, value in entries)


def decode_file_info(message: bytes, what: str) -> dict[bytes, bytes]:
    """The entries of an InfoProto; a later duplicate name wins, as in Java's map."""
    out: dict[bytes, bytes] = {}
    for number, entry in _fields(message, what):
        if number != 1:
            continue
        if not isinstance(entry, bytes):
            raise CorruptTableError(f"{what}: file info entry is not a message")
        pair = dict(_fields(entry, what))
        name, value = pair.get(1, b""), pair.get(2, b"")
        if not isinstance(name, bytes) or not isinstance(value, bytes):
            raise CorruptTableError(f"{what}: file info entry holds a number where bytes belong")
        out[name] = value
    return out


# File info names the HFile layer itself writes and reads (Hudi's HFileInfo); only some carry the `hfile.` prefix.
LAST_KEY = b"hfile.LASTKEY"
AVG_KEY_LEN = b"hfile.AVG_KEY_LEN"
AVG_VALUE_LEN = b"hfile.AVG_VALUE_LEN"
CREATE_TIME_TS = b"hfile.CREATE_TIME_TS"
KEY_VALUE_VERSION = b"KEY_VALUE_VERSION"
MAX_MEMSTORE_TS_KEY = b"MAX_MEMSTORE_TS_KEY"
KEY_VALUE_VERSION_WITH_MVCC_TS = 1
