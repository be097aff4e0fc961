"""The two variable-length integer encodings an HFile mixes.

Protobuf varints prefix the trailer and the file info (`writeDelimitedTo`) and encode the protobuf fields; Hadoop
`WritableUtils` VInts give the key lengths in block index entries. The two agree on 0..127 and differ above, so
each caller names the one its structure uses.
"""

from __future__ import annotations

from hudi_ds.errors import CorruptTableError
from hudi_ds.schema.avro_binary import uvarint

_UINT64 = (1 << 64) - 1


encode_uvarint = uvarint  # protobuf's varint is Avro's before zigzag


def decode_uvarint(data: bytes | memoryview, pos: int, what: str) -> tuple[int, int]:
    """(value, position after it) of the protobuf varint at `pos`; `what` names the structure for errors."""
    result = shift = 0
    end = len(data)
    while True:
        if pos >= end or shift > 63:
            raise CorruptTableError(f"{what}: truncated or overlong varint")
        byte = data[pos]
        pos += 1
        result |= (byte & 0x7F) << shift
        if byte < 0x80:
            return result & _UINT64, pos
        shift += 7


def encode_hadoop_vint(value: int) -> bytes:
    """Hadoop `WritableUtils.writeVLong`: one byte for -112..127, else a length byte and big-endian bytes."""
    if -112 <= value <= 127:
        return bytes([value & 0xFF])
    length = -112
    if value < 0:
        value = ~value
        length = -120
    magnitude = value
    while magnitude:
        magnitude >>= 8
        length -= 1
    count = -(length + 120) if length < -120 else -(length + 112)
    return bytes([length & 0xFF]) + value.to_bytes(count, "big")


def decode_hadoop_vint(data: bytes | memoryview, pos: int, what: str) -> tuple[int, int]:
    """(value, position after it) of the Hadoop VInt/VLong at `pos`."""
    if pos >= len(data):
        raise CorruptTableError(f"{what}: truncated length")
    first = data[pos] - 256 if data[pos] > 127 else data[pos]
    if first >= -112:
        return first, pos + 1
    count = (-119 - first) if first < -120 else (-111 - first)
    end = pos + count
    if end > len(data):
        raise CorruptTableError(f"{what}: truncated length")
    value = int.from_bytes(data[pos + 1:end], "big")
    return (~value if first < -120 else value), end
