"""Row groups a query can skip: a base file's parquet statistics (min, max, null count per row group) against
the query's filters, so a lazy read decodes only the row groups that may hold matching rows.

Only a slice read without log files can be skipped this way: a log record can turn a base row that fails the
filters into one that passes. Any doubt keeps the row group: no statistics, a column the file lacks, a value
of another Python type than the statistics (a promoted column), and floating-point columns (NaN is outside
parquet's min/max, and engines disagree on whether NaN > x).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_ds.errors import ConfigError
from hudi_ds.read.filters import Filter, literal, null_matches

if TYPE_CHECKING:
    import pyarrow.parquet as pq


@dataclass(frozen=True)
class Bound:
    """One filter with its value(s) as Python values of the column's type."""

    column: str
    op: str
    values: tuple[Any, ...]  # one value, or the members of `in` / `not in`


def bounds_of(filters: Sequence[Filter], schema: pa.Schema) -> tuple[Bound, ...]:
    out = []
    for col, op, value in filters:
        typ = schema.field(col).type
        if pa.types.is_floating(typ) or not (pa.types.is_primitive(typ) or pa.types.is_string(typ)
                                             or pa.types.is_large_string(typ) or pa.types.is_decimal(typ)
                                             or pa.types.is_binary(typ)):
            continue
        members = value if op in ("in", "not in") else [value]
        try:
            typed = tuple(literal(v, typ).as_py() for v in members)
        except ConfigError:
            continue
        if any(v is None for v in typed):
            continue
        out.append(Bound(col, op, typed))
    return tuple(out)


def may_match(bound: Bound, low: Any, high: Any) -> bool:
    """Whether a value in [low, high] may pass the filter."""
    v = bound.values
    if any(type(x) is not type(low) or type(x) is not type(high) for x in v):
        return True
    op = bound.op
    if op == "=":
        return bool(low <= v[0] <= high)
    if op == "!=":
        return not (low == high == v[0])
    if op == "<":
        return bool(low < v[0])
    if op == "<=":
        return bool(low <= v[0])
    if op == ">":
        return bool(high > v[0])
    if op == ">=":
        return bool(high >= v[0])
    if op == "in":
        return any(low <= x <= high for x in v)
    if op == "not in":
        return not (low == high and low in v)
    return True


@dataclass(frozen=True)
class RowGroupFilter:
    """The filters a read applies, as tests on row-group statistics."""

    bounds: tuple[Bound, ...]

    @classmethod
    def of(cls, filters: Sequence[Filter], schema: pa.Schema) -> RowGroupFilter:
        return cls(bounds_of(filters, schema))

    def __bool__(self) -> bool:
        return bool(self.bounds)

    def row_groups(self, metadata: pq.FileMetaData) -> list[int]:
        """The row groups of a file that may hold rows passing every filter."""
        if metadata.num_row_groups == 0:
            return []
        first = metadata.row_group(0)
        index = {first.column(j).path_in_schema: j for j in range(first.num_columns)}
        return [i for i in range(metadata.num_row_groups) if self._may_hold(metadata.row_group(i), index)]

    def _may_hold(self, rg: pq.RowGroupMetaData, index: dict[str, int]) -> bool:
        for bound in self.bounds:
            j = index.get(bound.column)
            if j is None:
                continue
            stats = rg.column(j).statistics
            if stats is None:
                continue
            # a group of nulls only may hold a match where a null row may pass (the Python API's rule keeps the
            # most: it serves Spark's too)
            if stats.has_null_count and stats.null_count == rg.num_rows and rg.num_rows \
                    and not null_matches(bound.op, sql_nulls=False):
                return False
            if null_matches(bound.op, sql_nulls=False) and (not stats.has_null_count or stats.null_count):
                continue  # its null rows pass `not in` whatever its values are
            if not stats.has_min_max:
                continue
            try:
                if not may_match(bound, stats.min, stats.max):
                    return False
            except TypeError:
                continue
        return True
