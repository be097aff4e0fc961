"""Rows that say they are deletes, as Apache Hudi's payloads and merge modes read them: `_hoodie_is_deleted` is
true, or the table's custom delete field holds its marker value (`hoodie.payload.delete.field` /
`hoodie.payload.delete.marker`, AWS DMS's Op=D). An upsert deletes their keys; an insert or bulk insert drops
them (Hudi's create handle writes no deleted record). One owner for every writer: the Python API, Spark batch
writes and the streaming sink all pass their rows through TaskWriter.write."""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import InvalidDataError
from hudi_ds.write.routing import DELETE

IS_DELETED = "_hoodie_is_deleted"  # HoodieRecord.HOODIE_IS_DELETED_FIELD


@dataclass(frozen=True)
class DeleteMarker:
    """The custom delete marker of a write: a row whose `field` reads as `marker` is a delete."""

    field: str
    marker: str


def delete_marker_of(config: TableConfig, opts: HudiOptions) -> DeleteMarker | None:
    """The write's custom delete marker: the options' (checked against the table's in table_shape), else the one
    the table records."""
    if opts.delete_field is not None and opts.delete_marker is not None:
        return DeleteMarker(opts.delete_field, opts.delete_marker)
    if config.delete_field is not None and config.delete_marker is not None:
        return DeleteMarker(config.delete_field, config.delete_marker)
    return None


def require_boolean_flag(schema: pa.Schema) -> None:
    """A `_hoodie_is_deleted` column must be boolean (checked before a write begins: nothing is written)."""
    if IS_DELETED in schema.names and not pa.types.is_boolean(schema.field(IS_DELETED).type):
        raise InvalidDataError(
            f"column {IS_DELETED} is {schema.field(IS_DELETED).type}, but Apache Hudi reads it as a boolean delete "
            "flag (true: the row deletes its key); cast it to boolean or rename the column")


def marked_deletes(rows: pa.Table, marker: DeleteMarker | None) -> pa.Array | None:
    """Which rows are deletes by their own cells; None when no row can be (neither column is there)."""
    flags = None
    if IS_DELETED in rows.column_names:
        flags = pc.fill_null(rows[IS_DELETED], False)
    if marker is not None and marker.field in rows.column_names:
        text = pc.cast(rows[marker.field], pa.string())
        hit = pc.fill_null(pc.equal(text, pa.scalar(marker.marker)), False)
        flags = hit if flags is None else pc.or_(flags, hit)
    return flags


def apply_delete_markers(rows: pa.Table, marker: DeleteMarker | None, operation: str) -> pa.Table:
    """Upserts: the marked rows become deletes (the DELETE flag; their cells are not stored). Inserts and bulk
    inserts: the marked rows are dropped. Other operations take the rows as they are."""
    if operation not in ("upsert", "insert", "bulk_insert"):
        return rows
    flags = marked_deletes(rows, marker)
    if flags is None or not pc.any(flags).as_py():
        return rows
    if operation != "upsert":
        return rows.filter(pc.invert(flags))
    if DELETE in rows.column_names:
        flags = pc.or_(pc.fill_null(rows[DELETE], False), flags)
        return rows.set_column(rows.column_names.index(DELETE), DELETE, flags)
    return rows.append_column(DELETE, flags)


__all__ = ["IS_DELETED", "DeleteMarker", "apply_delete_markers", "delete_marker_of", "marked_deletes",
           "require_boolean_flag"]
