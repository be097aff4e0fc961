"""Avro binary encoding primitives shared by the log-block and timeline-file writers."""

from __future__ import annotations


def zigzag(n: int) -> bytes:
    """An Avro int/long: zigzag, then base-128 varint."""
    z = (n << 1) ^ (n >> 63)
    out = bytearray()
    while z > 0x7F:
        out.append((z & 0x7F) | 0x80)
        z >>= 7
    out.append(z)
    return bytes(out)


def avro_bytes(b: bytes) -> bytes:
    """An Avro bytes/string value: length, then the bytes."""
    return zigzag(len(b)) + b
