"""Fit a table read from one file to the table schema: schema evolution and type differences
between files (older files lack new columns; Spark stores bytes/shorts as int32, etc.)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError
from hudi_ds.schema.meta import temporal_precision_only
from hudi_ds.schema.strings import decoded


def conform(table: pa.Table, schema: pa.Schema, path: str, keep_dictionaries: frozenset[str] = frozenset()) -> pa.Table:
    """Columns of `schema` in its order: missing ones as nulls, extra ones dropped, types cast (safely but for
    the precision of timestamps: a narrowing that overflows is a corrupt file, not values to wrap).

    Columns named in `keep_dictionaries` that were read dictionary-encoded (with the field's value type) stay
    so: a merge filters them as indices and expands only the rows it keeps."""
    if table.schema.equals(schema, check_metadata=False):
        return table
    columns = []
    fields = []
    names = set(table.column_names)
    for field in schema:
        if field.name not in names:
            columns.append(pa.nulls(table.num_rows, field.type))
            fields.append(field)
            continue
        col = table[field.name]
        if pa.types.is_dictionary(col.type) and not pa.types.is_dictionary(field.type):
            if field.name in keep_dictionaries and col.type.value_type.equals(field.type):
                columns.append(col)
                fields.append(field.with_type(col.type))
                continue
            col = decoded(col, col.type.value_type)
        fields.append(field)
        if not col.type.equals(field.type):
            try:
                col = pc.cast(col, field.type, safe=not temporal_precision_only(col.type, field.type))
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise CorruptTableError(
                    f"{path}: column {field.name!r} has type {col.type}, which cannot be read as the table's "
                    f"{field.type} ({exc})"
                ) from exc
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=pa.schema(fields, metadata=schema.metadata))

