"""A parquet base file's column ranges (Hudi's HoodieColumnRangeMetadata): per top-level column, the bounds, value
and null counts and sizes its footer gives, from which the column_stats and partition_stats records are built.

The write task takes them from the footer its parquet writer just produced and carries them in the file's write
stat (as Hudi's write stats carry `recordsStats`), so the commit builds the records without opening the files it
wrote; files whose ranges no task reported (bootstrap, other writers' files, a compaction of another process) get
them from their footer, through the same function, so both give the same records. The record key column has no
parquet statistics in hudi_ds's files (costly on unique strings): its bounds are the footer's
`hoodie_min_record_key` / `hoodie_max_record_key`, which name the same values.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ds.schema.meta import RECORD_KEY

MIN_KEY, MAX_KEY = b"hoodie_min_record_key", b"hoodie_max_record_key"


@dataclass(frozen=True)
class ColumnRange:
    """One column's statistics over a whole file: `low`/`high` as pyarrow's logical values (None when every value
    is null), `nulls` None when the footer does not give them (no statistics in some row group: the file's values
    must be read to know them)."""

    column: str
    type: pa.DataType
    low: Any
    high: Any
    values: int
    nulls: int | None
    total_size: int
    uncompressed_size: int


FileRanges = tuple[ColumnRange, ...]


def _key_bounds(metadata: pq.FileMetaData) -> tuple[str, str] | None:
    kv = metadata.metadata or {}
    low, high = kv.get(MIN_KEY), kv.get(MAX_KEY)
    return None if low is None or high is None else (low.decode("utf-8"), high.decode("utf-8"))


def footer_ranges(metadata: pq.FileMetaData, indexed: Callable[[pa.DataType], bool]) -> FileRanges:
    """The ranges of the top-level columns of `metadata`'s schema whose type `indexed` accepts (those
    column_stats can hold)."""
    schema = metadata.schema.to_arrow_schema()
    names = set(schema.names)
    groups = [metadata.row_group(i) for i in range(metadata.num_row_groups)]
    out = []
    for j in range(metadata.num_columns):
        column = metadata.schema.column(j).path
        if column not in names:
            continue  # a nested leaf
        typ = schema.field(column).type
        if not indexed(typ):
            continue
        chunks = [g.column(j) for g in groups]
        values = sum(c.num_values for c in chunks)
        nulls: int | None = 0
        low = high = None
        for c in chunks:
            s = c.statistics
            if s is None or not s.has_null_count:
                nulls = None
                break
            nulls += s.null_count
            if c.num_values > s.null_count:
                if not s.has_min_max:
                    nulls = None
                    break
                low = s.min if low is None or s.min < low else low
                high = s.max if high is None or s.max > high else high
        if nulls is None and column == RECORD_KEY and (bounds := _key_bounds(metadata)) is not None:
            (low, high), nulls = bounds, 0  # a record key is never null
        elif nulls is None:
            low = high = None
        out.append(ColumnRange(column, typ, low, high, values, nulls,
                               sum(c.total_compressed_size for c in chunks),
                               sum(c.total_uncompressed_size for c in chunks)))
    return tuple(out)
