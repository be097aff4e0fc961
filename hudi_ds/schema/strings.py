"""String columns built without per-row work: the meta columns hold one value per file (commit time,
partition path, file name) and partition columns one value per partition, and copying that one string
millions of times through Arrow's generic cast or take dominates reading and writing them."""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_MAX_STRING_BYTES = 2**31 - 1  # a `string` array's int32 offsets


def constant_dictionary(value: str, n: int) -> pa.DictionaryArray:
    """A dictionary-encoded string column holding one value n times (parquet writes it as such, identical on
    disk, without building n copies of the string)."""
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(n, dtype=np.int32)), pa.array([value], pa.string()))


def constant_strings(value: str, n: int) -> pa.Array:
    """A plain string column holding one value n times: the offsets are an arithmetic progression and the
    data one repeated byte string, both built in C."""
    raw = value.encode()
    if len(raw) * n > _MAX_STRING_BYTES:
        return constant_dictionary(value, n).cast(pa.string())
    offsets = np.arange(0, (n + 1) * len(raw), len(raw), dtype=np.int32) if raw else np.zeros(n + 1, np.int32)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw * n))


def decoded(column: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """A dictionary-encoded string column as plain `target` strings; chunks of one distinct value take the
    constant path, others a take from the dictionary."""
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([decoded(c, target) for c in column.chunks], type=target)
    if (pa.types.is_dictionary(column.type) and target == pa.string() and len(column.dictionary) == 1
            and column.null_count == 0):
        return constant_strings(column.dictionary[0].as_py(), len(column))
    return pc.cast(column, target)



def expand_dictionaries(table: pa.Table, like: pa.Schema) -> pa.Table:
    """`table` with its dictionary-encoded columns decoded where `like` has plain ones."""
    if table.schema.equals(like, check_metadata=False):
        return table
    columns = [decoded(table[f.name], like.field(f.name).type)
               if pa.types.is_dictionary(f.type) and not pa.types.is_dictionary(like.field(f.name).type)
               else table[f.name] for f in table.schema]
    return pa.Table.from_arrays(columns, schema=like)
