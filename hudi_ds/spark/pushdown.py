"""Spark filters (pyspark.sql.datasource.Filter) as hudi_ds filters: partition pruning plus an exact row filter.

A filter is taken over (not returned to Spark) only when its Arrow evaluation gives exactly Spark's answer:
top-level columns of string, integer, boolean, date, decimal or binary type, non-null literals. Floats (NaN
ordering), timestamps (literal time zones), nested columns and null-literal tests stay with Spark.
"""

from __future__ import annotations

import datetime
import decimal
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

Triple = tuple[str, str, Any]

_OPS = {"EqualTo": "=", "EqualNullSafe": "=", "GreaterThan": ">", "GreaterThanOrEqual": ">=",
        "LessThan": "<", "LessThanOrEqual": "<=", "In": "in"}
_NEGATED = {"=": "!=", "in": "not in"}


def _exact_type(t: pa.DataType) -> bool:
    return (pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_integer(t)
            or pa.types.is_boolean(t) or pa.types.is_date32(t) or pa.types.is_decimal(t)
            or pa.types.is_binary(t) or pa.types.is_large_binary(t))


def _literal_ok(value: Any, t: pa.DataType) -> bool:
    if value is None:
        return False
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return isinstance(value, str)
    if pa.types.is_boolean(t):
        return isinstance(value, bool)
    if pa.types.is_integer(t):
        return isinstance(value, int) and not isinstance(value, bool)
    if pa.types.is_date32(t):
        return isinstance(value, datetime.date) and not isinstance(value, datetime.datetime)
    if pa.types.is_decimal(t):
        return isinstance(value, (decimal.Decimal, int)) and not isinstance(value, bool)
    return isinstance(value, (bytes, bytearray))


def translate(f: Any, schema: pa.Schema) -> Triple | None:
    """(column, op, value) for a Spark filter we evaluate exactly, else None."""
    negated = type(f).__name__ == "Not"
    inner = f.child if negated else f
    op = _OPS.get(type(inner).__name__)
    attr = getattr(inner, "attribute", None)
    if op is None or attr is None or len(attr) != 1 or attr[0] not in schema.names:
        return None
    col = attr[0]
    t = schema.field(col).type
    if not _exact_type(t):
        return None
    value = inner.value
    if op == "in":
        values = list(value)
        if not values or not all(_literal_ok(v, t) for v in values):
            return None  # IN with a NULL element: Spark's three-valued logic, left to Spark
        value = values
    elif not _literal_ok(value, t):
        return None
    try:
        for v in value if op == "in" else [value]:
            _scalar(v, t)
    except (pa.ArrowInvalid, pa.ArrowTypeError, pa.ArrowNotImplementedError, OverflowError, TypeError):
        return None
    if negated:
        if type(inner).__name__ == "EqualNullSafe" or op not in _NEGATED:
            return None  # NOT(a <=> v) keeps nulls; NOT(a > v) is pushed by Spark as a <= v anyway
        op = _NEGATED[op]
    return (col, op, value)


def _scalar(value: Any, t: pa.DataType) -> pa.Scalar:
    if pa.types.is_decimal(t) and isinstance(value, int):
        value = decimal.Decimal(value)
    return pa.scalar(value, type=t)


def expression(filters: list[Triple], schema: pa.Schema) -> pc.Expression | None:
    """Row filter with Spark's semantics: a comparison with a null column value is not true."""
    expr: pc.Expression | None = None
    for col, op, value in filters:
        t = schema.field(col).type
        field = pc.field(col)
        if op in ("in", "not in"):
            e = field.isin(pa.array([_scalar(v, t).as_py() for v in value], type=t))
            e = e if op == "in" else ~e
        else:
            lit = _scalar(value, t)
            e = {"=": field == lit, "!=": field != lit, "<": field < lit, "<=": field <= lit,
                 ">": field > lit, ">=": field >= lit}[op]
        e = e & field.is_valid()
        expr = e if expr is None else expr & e
    return expr


@dataclass(frozen=True)
class RowFilter:
    """Picklable row filter shipped to executors (Expressions are rebuilt there)."""

    filters: tuple[Triple, ...]

    def apply(self, table: pa.Table) -> pa.Table:
        if not self.filters or table.num_rows == 0:
            return table
        expr = expression(list(self.filters), table.schema)
        return table if expr is None else table.filter(expr)
