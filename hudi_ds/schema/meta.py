"""Hudi meta columns (spec §5.1) and table-shape helpers.

Every record carries the five meta strings first, so merges and incremental reads can work on key, commit
time and sequence number without knowing the data schema; `fit_table` reshapes files written under an older
schema.
"""

from __future__ import annotations

from typing import Any

import pyarrow as pa

from hudi_ds.errors import SchemaError

COMMIT_TIME = "_hoodie_commit_time"
COMMIT_SEQNO = "_hoodie_commit_seqno"
RECORD_KEY = "_hoodie_record_key"
PARTITION_PATH = "_hoodie_partition_path"
FILE_NAME = "_hoodie_file_name"

META_COLUMNS: list[str] = [COMMIT_TIME, COMMIT_SEQNO, RECORD_KEY, PARTITION_PATH, FILE_NAME]
# Optional 6th meta column written only by tables with hoodie.allow.operation.metadata.field=true (CDC).
OPERATION_COLUMN = "_hoodie_operation"

META_SCHEMA: pa.Schema = pa.schema([pa.field(name, pa.string(), nullable=True) for name in META_COLUMNS])

_ALL_META = frozenset([*META_COLUMNS, OPERATION_COLUMN])


def is_meta_column(name: str) -> bool:
    """True for the five meta columns and `_hoodie_operation`."""
    return name in _ALL_META


def with_meta(schema: pa.Schema) -> pa.Schema:
    """Meta fields first, then the data fields; meta fields already present in `schema` are not repeated.

    A `_hoodie_operation` column, if present, is kept right after the five meta fields as Spark lays it out.
    """
    fields: list[pa.Field] = list(META_SCHEMA)
    if OPERATION_COLUMN in schema.names:
        fields.append(schema.field(OPERATION_COLUMN))
    fields.extend(f for f in schema if f.name not in _ALL_META)
    return pa.schema(fields, metadata=schema.metadata)


def with_meta_avro(avro_schema: dict[str, Any]) -> dict[str, Any]:
    """Avro record schema with the five meta fields first (declared as Spark does), then the data fields."""
    fields = avro_schema.get("fields", [])
    present = {f["name"]: f for f in fields if f.get("name") in META_COLUMNS}
    meta = [present.get(m) or {"name": m, "type": ["null", "string"], "doc": "", "default": None}
            for m in META_COLUMNS]
    return {**avro_schema, "fields": meta + [f for f in fields if f.get("name") not in META_COLUMNS]}


def strip_meta(schema: pa.Schema) -> pa.Schema:
    """The data fields only (drops the five meta fields and `_hoodie_operation`)."""
    return pa.schema([f for f in schema if f.name not in _ALL_META], metadata=schema.metadata)


def fit_table(table: pa.Table, schema: pa.Schema, path: str = "<table>",
              keep_dictionaries: frozenset[str] = frozenset()) -> pa.Table:
    """`table` reshaped to exactly `schema`: columns by name, missing ones (also nested struct fields) as
    nulls, extra ones dropped, types cast (temporal types may lose precision, the rest must cast safely). Columns
    named in `keep_dictionaries` that are dictionary-encoded with the field's value type stay so."""
    if table.schema.equals(schema, check_metadata=False):  # the common case (every log block written): no walk
        return pa.Table.from_arrays(table.columns, schema=schema)
    cols, fields = [], []
    for f in schema:
        if f.name in table.column_names:
            col = table.column(f.name)
            if (f.name in keep_dictionaries and pa.types.is_dictionary(col.type)
                    and col.type.value_type.equals(f.type)):
                cols.append(col)
                fields.append(f.with_type(col.type))
                continue
            chunks = [_fit_array(c, f.type, f.name, path) for c in col.chunks]
            cols.append(pa.chunked_array(chunks, type=f.type))
        else:
            cols.append(pa.chunked_array([pa.nulls(table.num_rows, f.type)], type=f.type))
        fields.append(f)
    return pa.Table.from_arrays(cols, schema=pa.schema(fields, metadata=schema.metadata))


def temporal_precision_only(source: pa.DataType, target: pa.DataType) -> bool:
    """Timestamps (or times) of another unit: reading a finer one as a coarser one drops its sub-unit digits, as
    Hudi's readers do; every other cast must keep each value."""
    pt = pa.types
    return (pt.is_timestamp(source) and pt.is_timestamp(target)) or (pt.is_time(source) and pt.is_time(target))


def _fit_array(arr: pa.Array, t: pa.DataType, column: str, path: str) -> pa.Array:
    pt = pa.types
    src = arr.type
    if src == t:
        return arr
    mask = arr.is_null() if arr.null_count else None
    if pt.is_struct(t) and pt.is_struct(src):
        names = {src.field(i).name for i in range(src.num_fields)}
        children = [_fit_array(arr.field(f.name), f.type, f"{column}.{f.name}", path) if f.name in names
                    else pa.nulls(len(arr), f.type) for f in t]
        return pa.StructArray.from_arrays(children, fields=list(t), mask=mask)
    if arr.offset and (pt.is_list(src) or pt.is_large_list(src) or pt.is_map(src)):
        arr = pa.concat_arrays([arr])  # from_arrays rejects sliced offsets combined with a null bitmap
    if pt.is_list(t) and (pt.is_list(src) or pt.is_large_list(src)):
        values = _fit_array(arr.values, t.value_type, column, path)
        return pa.ListArray.from_arrays(arr.offsets.cast(pa.int32()), values, type=t, mask=mask)
    if pt.is_map(t) and pt.is_map(src):
        keys = _fit_array(arr.keys, t.key_type, column, path)
        items = _fit_array(arr.items, t.item_type, column, path)
        return pa.MapArray.from_arrays(arr.offsets, keys, items, type=t, mask=mask)
    try:
        return arr.cast(t, safe=not temporal_precision_only(src, t))
    except (pa.ArrowException, ValueError, TypeError) as exc:
        raise SchemaError(f"{path}: column {column!r} of type {src} cannot be read as {t}: {exc}") from exc
