"""How a Spark writer regroups the Arrow batches Spark hands it (no Spark session needed)."""

from __future__ import annotations

import pyarrow as pa
from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ds.spark import types


@settings(max_examples=60, deadline=None)
@given(sizes=st.lists(st.integers(0, 700), max_size=12), chunk_rows=st.integers(1, 1000))
def test_input_chunks_keep_every_row_in_order_as_contiguous_tables(sizes, chunk_rows):
    start = 0
    batches = []
    for size in sizes:
        ids = list(range(start, start + size))
        batches.append(pa.record_batch({"id": pa.array(ids, pa.int64()), "name": pa.array([f"n{i}" for i in ids])}))
        start += size
    original = types.WRITE_CHUNK_ROWS
    types.WRITE_CHUNK_ROWS = chunk_rows
    try:
        chunks = list(types.input_chunks(iter(batches)))
    finally:
        types.WRITE_CHUNK_ROWS = original
    assert all(c.num_rows for c in chunks)
    assert all(c[name].num_chunks == 1 for c in chunks for name in c.column_names)  # the writer's takes stay cheap
    assert [v for c in chunks for v in c["id"].to_pylist()] == list(range(start))
    assert all(c.num_rows < chunk_rows + 700 for c in chunks)
