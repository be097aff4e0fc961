"""Arrow <-> Spark schemas, and fitting Arrow data to the exact schema Spark expects.

Spark checks the Arrow schema of every batch a Python data source yields (types, nullability, `string` vs
`large_string`), so reads cast to `to_arrow_schema(spark_schema, timezone="UTC")`. Arrow types Spark has no
type for are widened (unsigned ints) or named in a SchemaError.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator

import pyarrow as pa
from pyspark.sql.pandas.types import from_arrow_type, to_arrow_schema
from pyspark.sql.types import (
    ArrayType,
    BinaryType,
    DataType,
    DecimalType,
    IntegerType,
    LongType,
    MapType,
    ShortType,
    StructField,
    StructType,
    TimestampNTZType,
    TimestampType,
)

from hudi_ds.errors import SchemaError
from hudi_ds.read.conform import conform

UTC = "UTC"


def _spark_type(t: pa.DataType, column: str) -> DataType:
    if pa.types.is_dictionary(t):
        return _spark_type(t.value_type, column)
    if pa.types.is_uint8(t):
        return ShortType()
    if pa.types.is_uint16(t):
        return IntegerType()
    if pa.types.is_uint32(t):
        return LongType()
    if pa.types.is_uint64(t):
        return DecimalType(20, 0)
    if pa.types.is_struct(t):
        return StructType([StructField(f.name, _spark_type(f.type, f"{column}.{f.name}"), True) for f in t])
    if pa.types.is_list(t) or pa.types.is_large_list(t) or pa.types.is_fixed_size_list(t):
        return ArrayType(_spark_type(t.value_type, f"{column}[]"), True)
    if pa.types.is_map(t):
        return MapType(_spark_type(t.key_type, f"{column}.key"), _spark_type(t.item_type, f"{column}.value"), True)
    if pa.types.is_timestamp(t):
        return TimestampType() if t.tz else TimestampNTZType()
    if pa.types.is_fixed_size_binary(t):
        return BinaryType()
    try:
        return from_arrow_type(t)
    except Exception as exc:  # noqa: BLE001 - pyspark raises several types for unsupported ones
        raise SchemaError(f"column {column!r} has Arrow type {t}, which Spark cannot represent ({exc})") from None


def spark_schema(schema: pa.Schema) -> StructType:
    """The Spark schema of an Arrow table schema (every column nullable, like Apache Hudi's reader)."""
    return StructType([StructField(f.name, _spark_type(f.type, f.name), True) for f in schema])


def arrow_schema(schema: StructType) -> pa.Schema:
    """The exact Arrow schema Spark exchanges for `schema` (timestamps in UTC)."""
    return to_arrow_schema(schema, timezone=UTC)


def fit(table: pa.Table, target: pa.Schema, where: str = "<read>") -> pa.Table:
    """`table` with exactly `target`'s columns, types and nullability (missing columns as nulls)."""
    if table.schema.equals(target):
        return table
    out = conform(table, target, where)
    if not out.schema.equals(target):  # conform keeps `target`; guard against metadata-only differences
        out = pa.Table.from_arrays(out.columns, schema=target)
    return out


# Spark ingests a Python source's Arrow batches faster when they are big (fewer round trips per row), but
# each batch is held whole on both sides: aim for this many bytes per batch, within these row bounds.
BATCH_BYTES = 64 << 20
BATCH_ROWS = (65536, 1 << 20)


def batch_rows(table: pa.Table) -> int:
    """Rows per Arrow batch for `table`: about BATCH_BYTES, within BATCH_ROWS."""
    per_row = table.nbytes / max(1, table.num_rows)
    return int(min(BATCH_ROWS[1], max(BATCH_ROWS[0], BATCH_BYTES // max(1.0, per_row))))


def batches(table: pa.Table, target: pa.Schema, max_rows: int | None = None) -> list[pa.RecordBatch]:
    """Record batches of `table` fitted to `target`, as Spark wants them."""
    fitted = fit(table, target)
    return fitted.to_batches(max_chunksize=max_rows or batch_rows(fitted))


# Spark hands a Python writer batches of spark.sql.execution.arrow.maxRecordsPerBatch rows (10,000 by default);
# routing rows to file groups costs a fixed amount per call, so writers take them in chunks of about this size.
WRITE_CHUNK_ROWS = 262_144
WRITE_CHUNK_BYTES = 32 << 20


def input_chunks(batches: Iterable[pa.RecordBatch]) -> Iterator[pa.Table]:
    """Consecutive non-empty batches joined into tables of about WRITE_CHUNK_ROWS rows, each one contiguous
    chunk: the writer gathers every file group's rows out of a chunk, and pyarrow's take and size over a table of
    ~26 small chunks cost more than copying them once (~20% of a bulk_insert task's CPU)."""
    pending: list[pa.RecordBatch] = []
    rows = size = 0
    for batch in batches:
        if not batch.num_rows:
            continue
        pending.append(batch)
        rows += batch.num_rows
        size += batch.nbytes
        if rows >= WRITE_CHUNK_ROWS or size >= WRITE_CHUNK_BYTES:
            yield pa.Table.from_batches(pending).combine_chunks()
            pending, rows, size = [], 0, 0
    if pending:
        yield pa.Table.from_batches(pending).combine_chunks()


def normalize_input(table: pa.Table, target: pa.Schema) -> pa.Table:
    """Rows Spark hands the writer as a table of `target` (string/large_string, timezone, ...)."""
    if table.schema.equals(target, check_metadata=False):
        return table
    cols = []
    for f in target:
        col = table[f.name]
        if not col.type.equals(f.type):
            col = col.cast(f.type)
        cols.append(col)
    return pa.Table.from_arrays(cols, schema=target)
