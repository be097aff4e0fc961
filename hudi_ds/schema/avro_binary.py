"""Avro binary encoding primitives shared by the log-block and timeline-file writers, and the varint the
log-block scanners read."""

from __future__ import annotations

_UINT64 = (1 << 64) - 1


def uvarint(value: int) -> bytes:
    """Base-128 varint of an unsigned 64-bit value (Avro after zigzag, protobuf; a negative int64 is written as
    its two's complement in ten bytes, as Java's `writeUInt64NoTag` does)."""
    value &= _UINT64
    out = bytearray()
    while value > 0x7F:
        out.append((value & 0x7F) | 0x80)
        value >>= 7
    out.append(value)
    return bytes(out)


def zigzag(n: int) -> bytes:
    """An Avro int/long: zigzag, then base-128 varint."""
    return uvarint((n << 1) ^ (n >> 63))


def avro_bytes(b: bytes) -> bytes:
    """An Avro bytes/string value: length, then the bytes."""
    return zigzag(len(b)) + b


def read_zigzag(data: bytes, pos: int) -> tuple[int, int]:
    """The Avro int/long at `pos`: (value, position after it). IndexError when the bytes are no varint there: they
    end inside it, or it runs past the ten bytes of a long (damaged bytes, which every caller reads as such)."""
    shift = result = 0
    while True:
        b = data[pos]
        pos += 1
        result |= (b & 0x7F) << shift
        if b < 0x80:
            return (result >> 1) ^ -(result & 1), pos
        shift += 7
        if shift > 63:
            raise IndexError("varint longer than ten bytes")
