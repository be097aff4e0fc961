"""The one filter model: `(column, op, value)` triples, ANDed. The Python API's filters and Spark's pushed filters
(hudi_ds.spark.pushdown) both become these, and one evaluator, one partition pruner and one row filter serve both.

Null rows: a comparison with a null value is never true, so `=`, `!=`, `<`, ..., `in` never keep them. Only
`not in` differs between the two front ends, and each says which it wants: the Python API follows pyarrow's
filters (`~isin`: null rows kept), Spark's SQL (`x NOT IN (...)` is null for a null x: dropped), with
`sql_nulls=True`. `null_matches` is that rule; the row filter and the partition pruner (a null partition value
is the default partition) both ask it.
"""

from __future__ import annotations

import decimal
from collections.abc import Callable, Sequence
from dataclasses import dataclass
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


def literal(value: Any, typ: pa.DataType) -> pa.Scalar:
    """`value` as a scalar of the column's type; ConfigError when it cannot be one."""
    try:
        if isinstance(value, str) and pa.types.is_boolean(typ):
            return pa.scalar(value.strip().lower() == "true")
        if isinstance(value, int) and not isinstance(value, bool) and pa.types.is_decimal(typ):
            value = decimal.Decimal(value)
        return pa.scalar(value).cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError, OverflowError, TypeError) as exc:
        raise ConfigError(f"filter value {value!r} cannot be compared with a column of type {typ}") from exc


def null_matches(op: str, sql_nulls: bool) -> bool:
    """Whether a null value satisfies `column <op> ...`: only `not in`, and only under the Python API's rule."""
    return op == "not in" and not sql_nulls


def expression(filters: Sequence[Filter], schema: pa.Schema, *, sql_nulls: bool = False) -> pc.Expression | None:
    """The filters as one pyarrow expression (None for no filter); null rows as `null_matches` says."""
    expr: pc.Expression | None = None
    for col, op, value in filters:
        typ = schema.field(col).type
        field = pc.field(col)
        if op in ("in", "not in"):
            e = field.isin(pa.array([literal(v, typ).as_py() for v in value], type=typ))
            if op == "not in":
                e = ~e
        else:
            lit = literal(value, typ)
            e = {"=": field == lit, "!=": field != lit, "<": field < lit, "<=": field <= lit,
                 ">": field > lit, ">=": field >= lit}[op]
        # pyarrow's own null results differ by op (null for comparisons, false/true for isin): state the rule
        e = e | field.is_null() if null_matches(op, sql_nulls) else e & field.is_valid()
        expr = e if expr is None else expr & e
    return expr


@dataclass(frozen=True)
class RowFilter:
    """Filters bound to a null rule, picklable for Spark tasks (expressions are rebuilt where rows are)."""

    filters: tuple[Filter, ...] = ()
    sql_nulls: bool = False

    def apply(self, table: pa.Table) -> pa.Table:
        if not self.filters or table.num_rows == 0:
            return table
        expr = expression(self.filters, table.schema, sql_nulls=self.sql_nulls)
        return table if expr is None else table.filter(expr)


def partition_pruner(config: TableConfig, filters: list[Filter], schema: pa.Schema, *,
                     sql_nulls: bool = False) -> Callable[[str], bool] | None:
    """A predicate on partition paths, or None when no filter touches a partition column; the default partition
    (null values) is kept where `null_matches` keeps null rows."""
    fields = config.partition_fields
    relevant = [f for f in filters if f[0] in fields]
    if not relevant or config.uses_timestamp_keygen:
        return None

    def keep(path: str) -> bool:
        values = parse_partition_path(path, fields, config.hive_style, config.url_encode)
        if not values:
            return True
        for col, op, lit in relevant:
            if col in values and not partition_value_matches(
                    values[col], op, lit, schema.field(col).type, null_matches=null_matches(op, sql_nulls)):
                return False
        return True

    return keep
