"""Hudi log files: block framing (`format`) and block contents (`blocks`). HFile blocks, the metadata table's,
are in `hfile_block`, imported by the metadata table's code alone: a data table's read does not load the HFile
package (issue 32)."""

from hudi_ds.log.blocks import (
    CONTENT_VERSION,
    DELETE_RECORD_LIST_SCHEMA,
    DeleteRecords,
    decode_avro_data_block,
    decode_delete_block,
    decode_parquet_data_block,
    encode_avro_data_block,
    encode_delete_block,
    encode_parquet_data_block,
    encode_rollback_block,
)
from hudi_ds.log.format import MAGIC, BlockType, HeaderKey, LogBlock, encode_block, read_blocks, require_type
from hudi_ds.schema.meta import fit_table

__all__ = [
    "CONTENT_VERSION",
    "DELETE_RECORD_LIST_SCHEMA",
    "MAGIC",
    "BlockType",
    "DeleteRecords",
    "HeaderKey",
    "LogBlock",
    "decode_avro_data_block",
    "decode_delete_block",
    "decode_parquet_data_block",
    "encode_avro_data_block",
    "encode_block",
    "encode_delete_block",
    "encode_parquet_data_block",
    "encode_rollback_block",
    "fit_table",
    "read_blocks",
    "require_type",
]
