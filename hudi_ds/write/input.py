"""Turning user data into Arrow batches of the table schema (with schema evolution)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from typing import Any

import pyarrow as pa

from hudi_ds.errors import InvalidDataError, SchemaError
from hudi_ds.schema.java_text import java_text
from hudi_ds.schema.meta import META_COLUMNS, OPERATION_COLUMN

# Avro's int: Spark's byte, short and int all reach Hudi's writer as one type
_AVRO_INT = (pa.int8(), pa.int16(), pa.int32())
_GIVEN = "__given:"  # cast_to: a partition column as the data gave it, for the key generator


def _kind(t: pa.DataType) -> str | None:
    """The type of Hudi's InternalSchema a storable Arrow type is, for the promotion rules."""
    if any(t.equals(i) for i in _AVRO_INT):
        return "int"
    kinds = {pa.int64(): "long", pa.float32(): "float", pa.float64(): "double", pa.string(): "string",
             pa.binary(): "binary", pa.date32(): "date"}
    for arrow_type, kind in kinds.items():
        if t.equals(arrow_type):
            return kind
    return "decimal" if pa.types.is_decimal(t) else None


# SchemaChangeUtils.isTypeUpdateAllow: the table types an incoming type is cast to
_PROMOTIONS = {
    "int": {"long", "float", "double", "string", "decimal"},
    "long": {"float", "double", "string", "decimal"},
    "float": {"double", "string", "decimal"},
    "double": {"string", "decimal"},
    "date": {"string"},
    "binary": {"string"},
    "decimal": {"decimal", "string"},
    "string": {"date", "decimal", "binary"},
}
# Avro's reader/writer resolution (AvroSchemaCompatibility, checkValidEvolution): the incoming types a table's
# column may evolve to, the incoming schema reading the files already written
_TABLE_EVOLUTIONS = {"int": {"long", "float", "double"}, "long": {"float", "double"}, "float": {"double"}}


def _promotes(source: pa.DataType, target: pa.DataType) -> bool:
    """Whether Apache Hudi's writer casts an incoming `source` column to the table's `target` type."""
    if _kind(source) == "int" and _kind(target) == "int":
        return target.bit_width >= source.bit_width
    if pa.types.is_decimal(source) and pa.types.is_decimal(target):
        # DecimalBase.isWiderThan, or as many digits at the same scale
        wider = target.precision - target.scale >= source.precision - source.scale and target.scale > source.scale
        return wider or (target.precision >= source.precision and target.scale == source.scale)
    kind = _kind(source)
    return kind is not None and _kind(target) in _PROMOTIONS.get(kind, ())


def _evolves(table: pa.DataType, incoming: pa.DataType) -> bool:
    """Whether the table's column takes the wider incoming type (the table's schema evolves)."""
    if _kind(table) == "int" and _kind(incoming) == "int":
        return incoming.bit_width > table.bit_width
    kind = _kind(table)
    return kind is not None and _kind(incoming) in _TABLE_EVOLUTIONS.get(kind, ())


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
    """The table schema after writing `incoming`, as Apache Hudi's Spark writer deduces it (HoodieSchemaUtils
    .deduceWriterSchema): new columns are appended; an incoming type the table's promotes to is cast to the
    table's (reconcileSchemaRequirements); a table column whose files the incoming type can read (int -> long ->
    float -> double) takes the incoming type; anything else is an error naming the column and both types."""
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
        if current.equals(f.type) or _promotes(f.type, current):
            continue
        if _evolves(current, f.type):
            fields[index[f.name]] = pa.field(f.name, f.type, True)
            continue
        raise SchemaError(
            f"column {f.name!r} has type {f.type} but the table stores {current}, and Apache Hudi's writer neither "
            f"casts {f.type} to {current} nor evolves the table's column to it: cast the column to {current} "
            "(docs/semantics.md, Schema evolution, lists the types each takes)"
        )
    return pa.schema(fields)


def cast_column(col: pa.ChunkedArray | pa.Array, target: pa.DataType, name: str) -> pa.ChunkedArray:
    """A column as the table stores it, converted as Hudi's writer converts a promoted value (HoodieAvroUtils
    .rewritePrimaryTypeWithDiffSchemaType): numbers to text as Java prints them, integers to floats rounded."""
    col = col if isinstance(col, pa.ChunkedArray) else pa.chunked_array([col])
    if col.type.equals(target):
        return col
    source = _storable(col.type)
    try:
        if pa.types.is_string(target) and (pa.types.is_floating(source) or pa.types.is_decimal(source)):
            return pa.chunked_array([java_text(chunk) for chunk in col.cast(source).chunks], pa.string())
        if pa.types.is_integer(source) and pa.types.is_decimal(target):  # Arrow wants room for any integer
            col = col.cast(pa.decimal128(38, min(target.scale, 18)))
        lossy = pa.types.is_integer(source) and pa.types.is_floating(target)  # Java's (double) long rounds
        return col.cast(target, safe=not lossy)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
        raise SchemaError(f"column {name!r}: cannot store {col.type} as {target}: {exc}") from exc


def split_given(table: pa.Table) -> tuple[pa.Table, pa.Table]:
    """The table as stored (without cast_to's copies) and as the key generator reads it: the partition columns
    cast_to promoted as the data gave them (HoodieCreateRecordUtils hands Hudi's key generators the source row)."""
    copies = [n for n in table.column_names if n.startswith(_GIVEN)]
    if not copies:
        return table, table
    stored = table.drop_columns(copies)
    given = stored
    for name in copies:
        field = name[len(_GIVEN):]
        given = given.set_column(given.column_names.index(field), field, table[name])
    return stored, given


def cast_to(table: pa.Table, schema: pa.Schema, keep: Iterable[str] = (), given: Iterable[str] = ()) -> pa.Table:
    """The table's columns of `schema` (missing ones as nulls), cast; extra columns named in keep survive, and the
    columns named in `given` whose type changes also stay as the data gave them (split_given)."""
    cols = []
    names = []
    for f in schema:
        if f.name in table.column_names:
            col = cast_column(table[f.name], f.type, f.name)
        else:
            col = pa.chunked_array([pa.nulls(table.num_rows, f.type)])
        cols.append(col)
        names.append(f.name)
    for name in keep:
        if name in table.column_names and name not in names:
            cols.append(table[name])
            names.append(name)
    for name in given:
        if name in table.column_names and name in schema.names and not table[name].type.equals(schema.field(name).type):
            cols.append(table[name])
            names.append(_GIVEN + name)
    return pa.Table.from_arrays(cols, names=names)
