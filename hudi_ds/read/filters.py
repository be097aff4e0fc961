"""User filters `(column, op, value)`: validation, partition pruning and row filtering."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config import TableConfig
from hudi_ds.errors import ConfigError
from hudi_ds.keys.partition_path import parse_partition_path, partition_value_matches

OPS = ("=", "==", "!=", "<", "<=", ">", ">=", "in", "not in")
Filter = tuple[str, str, Any]


def normalize(filters: Sequence[Sequence[Any]] | None, schema: pa.Schema) -> list[Filter]:
    out: list[Filter] = []
    for f in filters or []:
        if len(f) != 3:
            raise ConfigError(f"filter {f!r} must be a (column, op, value) triple, e.g. ('dt', '=', '2024-01-01')")
        col, op, value = f[0], str(f[1]).lower().strip(), f[2]
        if op not in OPS:
            raise ConfigError(f"filter op {f[1]!r} on {col!r} is not supported; use one of {', '.join(OPS)}")
        if col not in schema.names:
            raise ConfigError(f"filter column {col!r} is not in the table; columns are {', '.join(schema.names)}")
        if op in ("in", "not in") and (isinstance(value, (str, bytes)) or not hasattr(value, "__iter__")):
            raise ConfigError(f"filter {col!r} {op} needs a list of values, got {value!r}")
        out.append((col, "=" if op == "==" else op, value))
    return out


def _literal(value: Any, typ: pa.DataType) -> pa.Scalar:
    try:
        if isinstance(value, str) and pa.types.is_boolean(typ):
            return pa.scalar(value.strip().lower() == "true")
        return pa.scalar(value).cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError) as exc:
        raise ConfigError(f"filter value {value!r} cannot be compared with a column of type {typ}") from exc


def expression(filters: list[Filter], schema: pa.Schema) -> pc.Expression | None:
    expr: pc.Expression | None = None
    for col, op, value in filters:
        typ = schema.field(col).type
        field = pc.field(col)
        if op in ("in", "not in"):
            values = pa.array([_literal(v, typ).as_py() for v in value], type=typ)
            e = field.isin(values)
            if op == "not in":
                e = ~e
        else:
            lit = _literal(value, typ)
            e = {
                "=": field == lit,
                "!=": field != lit,
                "<": field < lit,
                "<=": field <= lit,
                ">": field > lit,
                ">=": field >= lit,
            }[op]
        expr = e if expr is None else expr & e
    return expr


def apply(table: pa.Table, filters: list[Filter]) -> pa.Table:
    expr = expression(filters, table.schema)
    return table if expr is None else table.filter(expr)


def partition_pruner(config: TableConfig, filters: list[Filter], schema: pa.Schema) -> Callable[[str], bool] | None:
    """A predicate on partition paths, or None when no filter touches a partition column."""
    fields = config.partition_fields
    relevant = [f for f in filters if f[0] in fields]
    if not relevant or config.uses_timestamp_keygen:
        return None

    def keep(path: str) -> bool:
        values = parse_partition_path(path, fields, config.hive_style, config.url_encode)
        if not values:
            return True
        for col, op, lit in relevant:
            if col in values and not partition_value_matches(values[col], op, lit, schema.field(col).type):
                return False
        return True

    return keep
