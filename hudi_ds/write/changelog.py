"""Changelog input: rows that carry their change kind (Spark's CDF `_change_type`, Debezium's `op`, Flink's row
kinds) written as upserts and deletes. One owner for the Python API, Spark batch writes and the streaming sink,
so `hoodie.datasource.write.changelog.column` and `changelog.enabled` act the same through each."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config.options import HudiOptions
from hudi_ds.errors import ConfigError, InvalidDataError, SchemaError
from hudi_ds.read.changes import CHANGE_COMMIT_TIME
from hudi_ds.write.routing import DELETE

UPSERT_KINDS = ("insert", "update_postimage", "c", "r", "u", "+i", "+u")
PRE_IMAGE_KINDS = ("update_preimage", "-u")
DELETE_KINDS = ("delete", "d", "-d")


def changelog_column(opts: HudiOptions, incoming: pa.Schema, record_key_fields: Sequence[str], operation: str,
                     where: str) -> str | None:
    """The change-kind column the options name (or `changelog.enabled` finds) in the input, None for plain input;
    refused where changelog input cannot be applied (a table without a record key, an operation other than upsert).
    `where` names the table in messages."""
    col = opts.changelog_column
    if col is None and opts.changelog_enabled:
        col = next((c for c in ("_change_type", "op") if c in incoming.names), None)
        if col is None:
            raise ConfigError(
                "changelog.enabled=true but the data has neither a '_change_type' nor an 'op' column; name the "
                "change-kind column with hoodie.datasource.write.changelog.column")
    if col is None:
        return None
    if col not in incoming.names:
        raise SchemaError(
            f"hoodie.datasource.write.changelog.column={col!r} is not a column of the data; columns: "
            f"{incoming.names}")
    if not record_key_fields:
        raise ConfigError(f"changelog input updates and deletes records by key, but the table at {where} has no "
                          "record key; drop the changelog option or write to a table created with a record key")
    if operation != "upsert":
        raise ConfigError(f"changelog input is written as upserts and deletes; it cannot be used with "
                          f"operation {operation!r} (drop hoodie.datasource.write.operation or set it to upsert)")
    return col


def data_columns(incoming: pa.Schema, column: str | None) -> pa.Schema:
    """The input's schema without the change-kind column (and a hudi-py change feed's `_commit_time`): what the
    table stores."""
    if column is None:
        return incoming
    return pa.schema([f for f in incoming if f.name not in (column, CHANGE_COMMIT_TIME)])


def apply_changelog(table: pa.Table, column: str) -> pa.Table:
    """Rows of a change feed as upserts plus rows marked in a boolean `__delete` column; pre-images dropped."""
    kinds = pc.utf8_lower(pc.cast(table[column], pa.string()))
    known = UPSERT_KINDS + PRE_IMAGE_KINDS + DELETE_KINDS
    bad = pc.invert(pc.fill_null(pc.is_in(kinds, value_set=pa.array(known)), False))
    if pc.any(bad).as_py():
        sample = pc.unique(pc.filter(table[column], bad)).to_pylist()[:5]
        raise InvalidDataError(
            f"changelog column {column!r} holds unknown change kinds {sample}; expected one of {list(known)} "
            "(Spark CDF _change_type, Debezium op, Flink row kind)")
    keep = pc.invert(pc.is_in(kinds, value_set=pa.array(PRE_IMAGE_KINDS)))
    table = table.filter(keep)
    kinds = kinds.filter(keep)
    is_delete = pc.is_in(kinds, value_set=pa.array(DELETE_KINDS))
    table = table.drop_columns([column]).append_column(DELETE, is_delete)
    if CHANGE_COMMIT_TIME in table.column_names:
        # a hudi-py change feed: apply each key's changes in commit order (ties resolve to the later row)
        order = pc.sort_indices(table, sort_keys=[(CHANGE_COMMIT_TIME, "ascending")])
        table = table.take(order).drop_columns([CHANGE_COMMIT_TIME])
    return table


__all__ = ["DELETE_KINDS", "PRE_IMAGE_KINDS", "UPSERT_KINDS", "apply_changelog", "changelog_column", "data_columns"]
