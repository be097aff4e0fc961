"""Fit a table read from one file to the table schema: schema evolution and type differences
between files (older files lack new columns; Spark stores bytes/shorts as int32, etc.)."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError
from hudi_ds.schema.strings import decoded


def conform(table: pa.Table, schema: pa.Schema, path: str) -> pa.Table:
    """Columns of `schema` in its order: missing ones as nulls, extra ones dropped, types cast."""
    if table.schema.equals(schema, check_metadata=False):
        return table
    columns = []
    names = set(table.column_names)
    for field in schema:
        if field.name not in names:
            columns.append(pa.nulls(table.num_rows, field.type))
            continue
        col = table[field.name]
        if pa.types.is_dictionary(col.type) and not pa.types.is_dictionary(field.type):
            col = decoded(col, col.type.value_type)
        if not col.type.equals(field.type):
            try:
                col = pc.cast(col, field.type, safe=False)
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError) as exc:
                raise CorruptTableError(
                    f"{path}: column {field.name!r} has type {col.type}, which cannot be read as the table's "
                    f"{field.type} ({exc})"
                ) from exc
        columns.append(col)
    return pa.Table.from_arrays(columns, schema=schema)
