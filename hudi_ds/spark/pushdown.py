"""Spark filters (pyspark.sql.datasource.Filter) translated into the filter model of hudi_ds.read.filters,
evaluated there with Spark's null rule (`sql_nulls=True`): partition pruning plus an exact row filter.

A filter is taken over (not returned to Spark) only when its Arrow evaluation gives exactly Spark's answer:
top-level columns of string, integer, boolean, date, decimal or binary type, non-null literals. Floats (NaN
ordering), timestamps (literal time zones), nested columns and null-literal tests stay with Spark.
"""

from __future__ import annotations

import datetime
import decimal
from typing import Any

import pyarrow as pa

from hudi_ds.errors import ConfigError
from hudi_ds.read.filters import Filter, literal

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


def translate(f: Any, schema: pa.Schema) -> Filter | None:
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
            literal(v, t)
    except ConfigError:
        return None
    if negated:
        if type(inner).__name__ == "EqualNullSafe" or op not in _NEGATED:
            return None  # NOT(a <=> v) keeps nulls; NOT(a > v) is pushed by Spark as a <= v anyway
        op = _NEGATED[op]
    return (col, op, value)
