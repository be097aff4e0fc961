"""hudi_ds.keys.matching.index_in, is_in and all_distinct find what pyarrow.compute.index_in, is_in and
count_distinct find, integer keys by sorting and by a byte table."""

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ds.keys.matching import all_distinct, index_in, is_in

_INTS = st.lists(st.integers(min_value=-(2**63), max_value=2**63 - 1) | st.integers(min_value=-5, max_value=5),
                 max_size=40)


@settings(max_examples=200, deadline=None)
@given(_INTS, _INTS)
def test_integer_keys_are_found_at_their_first_occurrence(keys, held):
    got = index_in(pa.chunked_array([pa.array(keys, pa.int64())]), pa.array(held, pa.int64()))
    assert got.to_pylist() == pc.index_in(pa.array(keys, pa.int64()), value_set=pa.array(held, pa.int64())).to_pylist()


@settings(max_examples=50, deadline=None)
@given(st.lists(st.text(max_size=3), max_size=20), st.lists(st.text(max_size=3), max_size=20))
def test_string_keys_are_found_as_arrow_finds_them(keys, held):
    got = index_in(pa.array(keys, pa.string()), pa.array(held, pa.string()))
    assert got.to_pylist() == pc.index_in(pa.array(keys, pa.string()), value_set=pa.array(held, pa.string())).to_pylist()


_NEAR = st.lists(st.integers(min_value=-3, max_value=3) | st.none(), max_size=40)


@settings(max_examples=200, deadline=None)
@given(_NEAR, _NEAR, st.sampled_from([0, 2**62, -(2**63) + 3, 1 << 22, 1 << 23]), st.booleans(),
       st.sampled_from([pa.int64(), pa.int32()]))
def test_membership_is_what_arrow_finds(keys, held, offset, spread, typ):
    """Keys near each other (the byte table) and far apart (Arrow's hash set), with nulls, any integer width."""
    if typ == pa.int32():
        offset = offset % (1 << 24)
    far = 1 << 24 if spread else 0
    keys = pa.array([None if k is None else k + offset + far * (i % 2) for i, k in enumerate(keys)], typ)
    held = pa.array([None if k is None else k + offset for k in held], typ)
    assert is_in(pa.chunked_array([keys], typ), held).to_pylist() == pc.is_in(keys, value_set=held).to_pylist()


_CLOSE = st.lists(st.integers(min_value=0, max_value=60), max_size=60)


@settings(max_examples=200, deadline=None)
@given(_CLOSE, _CLOSE, st.sampled_from([0, -(2**63), 2**63 - 61, 1 << 40]), st.sampled_from([1, 3, 1 << 20]),
       st.sampled_from([pa.int64(), pa.int32(), pa.int8(), pa.uint64()]))
def test_close_integer_keys_are_found_at_their_first_occurrence(keys, held, offset, step, typ):
    """Held keys close to each other and spread out, at the ends of the type's range, repeated (the first
    occurrence wins)."""
    low, high = {pa.int8(): (-128, 127), pa.int32(): (-(2**31), 2**31 - 1), pa.uint64(): (0, 2**64 - 1)}.get(
        typ, (-(2**63), 2**63 - 1))
    def place(values: list[int]) -> pa.Array:
        return pa.array([min(max(offset + v * step, low), high) for v in values], typ)
    got = index_in(place(keys), pa.chunked_array([place(held)], typ))
    assert got.to_pylist() == pc.index_in(place(keys), value_set=place(held)).to_pylist()


@settings(max_examples=200, deadline=None)
@given(_CLOSE, st.sampled_from([0, -(2**62), 1 << 40]), st.sampled_from([1, 7, 1 << 30]))
def test_distinct_integer_keys_are_told_as_arrow_counts_them(values, offset, step):
    column = pa.array([offset + v * step for v in values], pa.int64())
    assert all_distinct(column) == (pc.count_distinct(column).as_py() == len(column))
