"""Schemas: Hudi meta columns and Arrow <-> Avro conversion."""

from hudi_ds.schema.avro import (
    arrow_to_avro,
    arrow_to_avro_records,
    avro_records_to_arrow,
    avro_to_arrow,
    decimal_fixed_size,
    record_name_and_namespace,
    sanitize_name,
    wire_schema,
)
from hudi_ds.schema.meta import (
    META_COLUMNS,
    META_SCHEMA,
    OPERATION_COLUMN,
    fit_table,
    is_meta_column,
    strip_meta,
    with_meta,
    with_meta_avro,
)

__all__ = [
    "META_COLUMNS",
    "META_SCHEMA",
    "OPERATION_COLUMN",
    "arrow_to_avro",
    "arrow_to_avro_records",
    "avro_records_to_arrow",
    "avro_to_arrow",
    "decimal_fixed_size",
    "fit_table",
    "is_meta_column",
    "record_name_and_namespace",
    "sanitize_name",
    "strip_meta",
    "wire_schema",
    "with_meta",
    "with_meta_avro",
]
