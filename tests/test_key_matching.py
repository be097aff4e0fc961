"""hudi_ds.keys.matching.index_in finds what pyarrow.compute.index_in finds, integer keys by sorting."""

import pyarrow as pa
import pyarrow.compute as pc
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ds.keys.matching import index_in

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
