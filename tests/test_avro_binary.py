"""The Avro varint shared by the log-block scanners and the record index codec: round trip, and one error
(IndexError) for every byte string that is no varint, which those readers take as damaged bytes."""

import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_ds.schema.avro_binary import read_zigzag, zigzag

LONGS = st.integers(min_value=-(1 << 63), max_value=(1 << 63) - 1)


@given(LONGS, st.binary(max_size=4), st.binary(max_size=4))
def test_every_long_reads_back_from_inside_other_bytes(value: int, before: bytes, after: bytes) -> None:
    encoded = zigzag(value)
    assert len(encoded) <= 10
    assert read_zigzag(before + encoded + after, len(before)) == (value, len(before) + len(encoded))


@given(LONGS)
def test_truncated_varint_is_index_error(value: int) -> None:
    encoded = zigzag(value)
    with pytest.raises(IndexError):
        read_zigzag(encoded[:-1], 0)


@given(st.integers(min_value=11, max_value=40))
def test_varint_past_ten_bytes_is_index_error(length: int) -> None:
    with pytest.raises(IndexError, match="ten bytes"):
        read_zigzag(b"\xff" * length + b"\x01", 0)
