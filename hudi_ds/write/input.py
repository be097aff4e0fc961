"""Turning user data into Arrow batches of the table schema (with schema evolution)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from hudi_ds.errors import InvalidDataError, SchemaError
from hudi_ds.schema.meta import META_COLUMNS, OPERATION_COLUMN

_WIDENINGS = {
    (pa.int8(), pa.int16()), (pa.int8(), pa.int32()), (pa.int8(), pa.int64()),
    (pa.int16(), pa.int32()), (pa.int16(), pa.int64()), (pa.int32(), pa.int64()),
    (pa.float32(), pa.float64()),
}


def iter_tables(data: Any) -> Iterator[pa.Table]:
    """A pyarrow Table / RecordBatch / RecordBatchReader, a polars DataFrame, or an iterable of
    RecordBatches or Tables, as a stream of tables (never materialising an iterable at once)."""
    if isinstance(data, pa.Table):
        yield data
        return
    if isinstance(data, pa.RecordBatch):
        yield pa.Table.from_batches([data])
        return
    if isinstance(data, pa.RecordBatchReader):
        for batch in data:
            yield pa.Table.from_batches([batch])
        return
    to_arrow = getattr(data, "to_arrow", None)
    if callable(to_arrow) and type(data).__module__.startswith("polars"):
        yield to_arrow()
        return
    if isinstance(data, Iterable) and not isinstance(data, (str, bytes, dict)):
        for item in data:
            if isinstance(item, pa.RecordBatch):
                yield pa.Table.from_batches([item])
            elif isinstance(item, pa.Table):
                yield item
            else:
                raise InvalidDataError(
                    f"write() got an iterable of {type(item).__name__}; pass pyarrow RecordBatches or Tables"
                )
        return
    raise InvalidDataError(
        f"write() cannot take {type(data).__name__}; pass a pyarrow Table, an iterable of RecordBatches, "
        "or a polars DataFrame"
    )


def _storable(t: pa.DataType) -> pa.DataType:
    """The type a column is stored as: large and dictionary types as their plain forms."""
    if pa.types.is_dictionary(t):
        return _storable(t.value_type)
    if pa.types.is_large_string(t) or pa.types.is_string_view(t):
        return pa.string()
    if pa.types.is_large_binary(t) or pa.types.is_binary_view(t):
        return pa.binary()
    if pa.types.is_timestamp(t) and t.unit == "ns":
        return pa.timestamp("us", t.tz)
    if pa.types.is_large_list(t) or pa.types.is_list_view(t):
        return pa.list_(_storable(t.value_type))
    if pa.types.is_list(t):
        return pa.list_(_storable(t.value_type))
    if pa.types.is_struct(t):
        return pa.struct([pa.field(f.name, _storable(f.type), True) for f in t])
    return t


def data_schema_of(incoming: pa.Schema) -> pa.Schema:
    """The storable data schema of user input: meta columns dropped (as Apache Hudi's writers do, so a table
    read with its meta columns can be written elsewhere), every column nullable."""
    seen: set[str] = set()
    for name in incoming.names:
        if name in seen:
            raise SchemaError(f"the data has two columns named {name!r}; rename or drop one")
        seen.add(name)
    skip = set(META_COLUMNS) | {OPERATION_COLUMN}
    return pa.schema([pa.field(f.name, _storable(f.type), True) for f in incoming if f.name not in skip])


def evolve(table_schema: pa.Schema | None, incoming: pa.Schema) -> pa.Schema:
    """The table schema after writing `incoming`: new columns are appended, int/float widen,
    anything else that differs is an error naming the column and both types."""
    incoming = data_schema_of(incoming)
    if table_schema is None:
        return incoming
    fields = list(table_schema)
    index = {f.name: i for i, f in enumerate(fields)}
    for f in incoming:
        if f.name not in index:
            fields.append(f)
            continue
        current = fields[index[f.name]].type
        if current.equals(f.type) or (f.type, current) in _WIDENINGS:
            continue
        if (current, f.type) in _WIDENINGS:
            fields[index[f.name]] = pa.field(f.name, f.type, True)
            continue
        raise SchemaError(
            f"column {f.name!r} has type {f.type} but the table stores {current}; cast the column to {current} "
            "(only int→long and float→double widen automatically)"
        )
    return pa.schema(fields)


def cast_to(table: pa.Table, schema: pa.Schema, keep: Iterable[str] = ()) -> pa.Table:
    """The table's columns of `schema` (missing ones as nulls), cast; extra columns named in keep survive."""
    cols = []
    names = []
    for f in schema:
        if f.name in table.column_names:
            col = table[f.name]
            if not col.type.equals(f.type):
                try:
                    col = col.cast(f.type)
                except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                    raise SchemaError(f"column {f.name!r}: cannot store {col.type} as {f.type}: {exc}") from exc
        else:
            col = pa.nulls(table.num_rows, f.type)
        cols.append(col)
        names.append(f.name)
    for name in keep:
        if name in table.column_names and name not in names:
            cols.append(table[name])
            names.append(name)
    return pa.Table.from_arrays(cols, names=names)
