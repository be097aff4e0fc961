"""Data skipping: the file slices (and partitions) a query's filters cannot match, told by the metadata table's
column_stats (per file) and partition_stats (per partition), as Hudi's reader (HoodieFileIndex with
ColumnStatsIndexSupport and PartitionStatsIndexSupport) skips them.

A slice is left out only when the statistics prove none of its rows can pass: each of its files read (the
base file, and the log files a merging read applies) has statistics for a filtered column that exclude every
value. A file without statistics, a column without them, a bound of another type than the column's (a
promoted column), floating-point and binary columns (NaN and Java's signed byte order), and strings beyond
U+D7FF (Java orders them by UTF-16 code unit, parquet by UTF-8 byte) all keep the slice. Log files count as
Hudi counts them: their statistics cover the values their records carry, so a log record that makes a base
row pass widens the log file's range, and a slice is kept when any of its files may match.
"""

from __future__ import annotations

import datetime
import decimal
from collections.abc import Mapping, Sequence
from typing import TYPE_CHECKING, Any

import pyarrow as pa

from hudi_ds.files.view import FileSlice
from hudi_ds.metadata import records as md
from hudi_ds.read.filters import Filter, null_matches
from hudi_ds.read.skipping import Bound, bounds_of, may_match

if TYPE_CHECKING:
    from hudi_ds.read.query import TableSnapshot


def bound_value(wrapped: md.WrappedValue | None, typ: pa.DataType) -> Any:
    """A statistics bound as a Python value of the column's type, or None when it cannot be compared safely."""
    if wrapped is None or wrapped.value is None:
        return None
    v = wrapped.value
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return v if isinstance(v, str) and all(c < "\ud800" for c in v) else None
    if pa.types.is_boolean(typ):
        return v if isinstance(v, bool) else None
    if pa.types.is_integer(typ):
        return v if isinstance(v, int) and not isinstance(v, bool) else None
    if pa.types.is_date32(typ):
        if isinstance(v, int) and not isinstance(v, bool):
            return datetime.date(1970, 1, 1) + datetime.timedelta(days=v)
        return v if isinstance(v, datetime.date) and not isinstance(v, datetime.datetime) else None
    if pa.types.is_timestamp(typ) and typ.unit in ("ms", "us"):
        micros_only = wrapped.wrapper == "TimestampMicrosWrapper"
        if isinstance(v, int) and not isinstance(v, bool) and (typ.unit == "us" or not micros_only):
            return pa.scalar(v, pa.int64()).cast(typ).as_py()
        return None
    if pa.types.is_decimal(typ):
        if isinstance(v, bytes):
            return decimal.Decimal(int.from_bytes(v, "big", signed=True)).scaleb(-typ.scale)
        return v if isinstance(v, decimal.Decimal) else None
    return None


def _column_may_match(bound: Bound, stats: md.ColumnStats, typ: pa.DataType) -> bool:
    if null_matches(bound.op, sql_nulls=False) and (stats.null_count is None or stats.null_count > 0):
        return True  # the Python API's rule keeps the most: it serves Spark's too
    if stats.min_value is None and stats.max_value is None:
        all_null = stats.value_count is not None and stats.null_count is not None \
            and stats.null_count >= stats.value_count
        return not all_null
    low, high = bound_value(stats.min_value, typ), bound_value(stats.max_value, typ)
    if low is None or high is None:
        return True
    try:
        return may_match(bound, low, high)
    except TypeError:
        return True


def may_hold(stats: Mapping[str, md.ColumnStats] | None, bounds: Sequence[Bound], schema: pa.Schema) -> bool:
    """Whether a file (or partition) with these statistics may hold a row passing every filter."""
    if stats is None:
        return True
    for bound in bounds:
        column = stats.get(bound.column)
        if column is not None and not _column_may_match(bound, column, schema.field(bound.column).type):
            return False
    return True


def _usable(filters: Sequence[Filter], schema: pa.Schema) -> tuple[Bound, ...]:
    return tuple(b for b in bounds_of(filters, schema) if not pa.types.is_binary(schema.field(b.column).type))


def skip_slices(snap: TableSnapshot, slices: list[FileSlice], filters: Sequence[Filter], schema: pa.Schema,
                include_logs: bool, latest: bool) -> list[FileSlice]:
    """The slices of `slices` whose statistics leave room for a match. Partition statistics are used for a
    read of the latest state without log files to merge only (they describe the latest base files; a
    time-travel read and a merging one use the per-file statistics alone)."""
    bounds = _usable(filters, schema)
    if not bounds or not slices:
        return slices
    columns = sorted({b.column for b in bounds})
    partition_stats = snap.index_stats(md.PARTITION_STATS, columns) if latest and not include_logs else None
    if partition_stats:
        slices = [sl for sl in slices if may_hold(partition_stats.get(sl.partition or md.NON_PARTITIONED_KEY),
                                                  bounds, schema)]
    file_stats = snap.index_stats(md.COLUMN_STATS, columns)
    if not file_stats:
        return slices

    def keep(sl: FileSlice) -> bool:
        names = ([sl.base_file.name] if sl.base_file else []) + \
            ([lf.name for lf in sl.log_files] if include_logs else [])
        return any(may_hold(file_stats.get(name), bounds, schema) for name in names)

    return [sl for sl in slices if keep(sl)]
