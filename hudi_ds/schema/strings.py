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
    data one repeated byte string, both built in C. A large column is filled in Arrow's memory pool by doubling
    copies (NumPy's, which release the GIL): a `bytes` repetition holds the GIL and takes fresh pages from the
    system at every read, which cost as much again in page faults (the constant meta columns of a snapshot are
    a fifth of its bytes)."""
    raw = value.encode()
    size = len(raw) * n
    if size > _MAX_STRING_BYTES:
        return constant_dictionary(value, n).cast(pa.string())
    if size < _POOL_FILL_BYTES:
        offsets = np.arange(0, (n + 1) * len(raw), len(raw), dtype=np.int32) if raw else np.zeros(n + 1, np.int32)
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(raw * n))
    offsets, data = pa.allocate_buffer(4 * (n + 1)), pa.allocate_buffer(size)
    _double(np.frombuffer(offsets, dtype=np.int32), np.zeros(1, np.int32), len(raw))
    _double(np.frombuffer(data, dtype=np.uint8), np.frombuffer(raw, dtype=np.uint8), 0)
    return pa.StringArray.from_buffers(n, offsets, data)


_POOL_FILL_BYTES = 1 << 16


def _double(out: np.ndarray, head: np.ndarray, step: int) -> None:
    """Fill `out` with `head` repeated, each copy plus `step` times the number of copies before it (the
    offsets of equal strings), by copies that double the filled part."""
    filled = len(head)
    out[:filled] = head
    while filled < len(out):
        take = min(filled, len(out) - filled)
        if step:
            np.add(out[:take], filled // len(head) * step, out=out[filled:filled + take])
        else:
            out[filled:filled + take] = out[:take]
        filled += take


_LOW_DIGITS = 4
# "0000" .. "9999": the low digits of every number, one row each
# (computed with numpy: formatting 10^4 strings cost ~10 ms of every process's import)
_LOW_TABLE = (np.arange(10**_LOW_DIGITS)[:, None] // 10 ** np.arange(_LOW_DIGITS - 1, -1, -1) % 10
              + ord("0")).astype(np.uint8)


def numbered_strings(prefix: str, first: int, n: int) -> pa.Array:
    """`prefix` followed by the decimal numbers first, first+1, ..., first+n-1 (Hudi's `_hoodie_commit_seqno`).

    The rows are runs sharing their length and high digits. Each run is a block of fixed-size records (prefix
    and high digits, then the low digits) filled by two broadcast copies, the low digits from a table of the
    10^4 four-digit strings: no per-row work, about a seventh of the time of a cast and a concatenation."""
    if first < 0:
        raise ValueError("numbered_strings counts from a non-negative number")
    head = prefix.encode()
    runs = []  # (first row, end row, lead bytes, digits taken from the low table)
    row, step = 0, 10**_LOW_DIGITS
    while row < n:
        high, low = divmod(first + row, step)
        if high:
            runs.append((row, min(n, row + step - low), head + str(high).encode(), _LOW_DIGITS))
        else:  # below 10^4: no leading zeros, so a run ends at the next power of ten
            width = len(str(low))
            runs.append((row, min(n, row + 10**width - low), head, width))
        row = runs[-1][1]
    offsets = np.zeros(n + 1, dtype=np.int64)
    for start, end, lead, width in runs:
        offsets[start + 1:end + 1] = offsets[start] + (len(lead) + width) * np.arange(1, end - start + 1)
    if offsets[-1] > _MAX_STRING_BYTES:
        return pc.binary_join_element_wise(prefix, pc.cast(pa.array(np.arange(first, first + n)), pa.string()), "")
    data = np.empty(int(offsets[-1]), dtype=np.uint8)
    for start, end, lead, width in runs:
        low = (first + start) % step
        records = data[offsets[start]:offsets[end]].view(np.dtype([("lead", f"V{len(lead)}"), ("low", f"V{width}")]))
        records["lead"] = np.void(lead)
        records["low"] = _LOW_TABLE[low:low + end - start, _LOW_DIGITS - width:].copy().view(f"V{width}").reshape(-1)
    return pa.StringArray.from_buffers(n, pa.py_buffer(offsets.astype(np.int32)), pa.py_buffer(data))


def decoded(column: pa.Array | pa.ChunkedArray, target: pa.DataType) -> pa.Array | pa.ChunkedArray:
    """A dictionary-encoded string column as plain `target` strings; chunks of one distinct value take the
    constant path, others a take from the dictionary."""
    if isinstance(column, pa.ChunkedArray):
        return pa.chunked_array([decoded(c, target) for c in column.chunks], type=target)
    if (pa.types.is_dictionary(column.type) and target == pa.string() and len(column.dictionary) == 1
            and column.null_count == 0):
        return constant_strings(column.dictionary[0].as_py(), len(column))
    return pc.cast(column, target)


def equal_to(column: pa.Array | pa.ChunkedArray, value: str) -> pa.Array | pa.ChunkedArray:
    """`pc.equal(column, value)`; a dictionary-encoded column compares its few distinct values, then takes the
    answers by its indices (Arrow's kernel decodes every row's string first)."""
    if isinstance(column, pa.ChunkedArray):
        if not pa.types.is_dictionary(column.type):
            return pc.equal(column, value)
        return pa.chunked_array([equal_to(c, value) for c in column.chunks], type=pa.bool_())
    if not pa.types.is_dictionary(column.type):
        return pc.equal(column, value)
    return pc.take(pc.equal(column.dictionary, value), column.indices)


def alike_dictionaries(tables: list[pa.Table]) -> list[pa.Table]:
    """`tables` with one schema: a column any of them holds dictionary-encoded is dictionary-encoded in all (a
    slice's log rows joining its base rows, few-valued columns read as dictionaries in some files and not in
    others). A compaction then writes them encoded, without decoding them and hashing the strings again."""
    encoded: dict[str, pa.DataType] = {}
    for table in tables:
        for f in table.schema:
            if pa.types.is_dictionary(f.type):
                encoded.setdefault(f.name, f.type)
    out = []
    for table in tables:
        plain = [f for f in table.schema if f.name in encoded and not pa.types.is_dictionary(f.type)]
        if plain:
            columns = [pc.dictionary_encode(table[f.name]).cast(encoded[f.name]) if f in plain else table[f.name]
                       for f in table.schema]
            table = pa.Table.from_arrays(columns, names=table.column_names)
        out.append(table)
    return out


def expand_dictionaries(table: pa.Table, like: pa.Schema) -> pa.Table:
    """`table` with its dictionary-encoded columns decoded where `like` has plain ones."""
    if table.schema.equals(like, check_metadata=False):
        return table
    columns = [decoded(table[f.name], like.field(f.name).type)
               if pa.types.is_dictionary(f.type) and not pa.types.is_dictionary(like.field(f.name).type)
               else table[f.name] for f in table.schema]
    return pa.Table.from_arrays(columns, schema=like)
