"""HFile data blocks (log block type HFILE_DATA, ordinal 4): the log blocks of the metadata table.

The content is a whole HFile of Avro records (`hudi_ds.hfile.avro_records`), written as Hudi's
HFileUtils.serializeRecordsToLogBlock does: keys sorted, 1 MB data blocks, GZ unless configured otherwise
(`hoodie.hfile.compression.algorithm`), the schema both in the SCHEMA header and in the HFile's file info, and
no bloom filter. Deletes of metadata records travel in ordinary DELETE blocks (`log.blocks`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from hudi_ds.errors import CorruptTableError
from hudi_ds.hfile.avro_records import (
    AvroHFileReader,
    Decoder,
    Encoder,
    write_avro_hfile,
    write_encoded_hfile,
)
from hudi_ds.hfile.block import Compression
from hudi_ds.log.format import BlockType, HeaderKey, LogBlock, encode_block, require_type

LOG_BLOCK_HFILE_BLOCK_SIZE = 1024 * 1024  # HFileUtils.DEFAULT_BLOCK_SIZE_FOR_LOG_FILE


def encode_hfile_data_block(records: Mapping[str, dict[str, Any]], schema_json: str, instant_time: str,
                            compression: Compression = Compression.GZ, created_ms: int | None = None,
                            encoder: Encoder | None = None) -> bytes:
    """A framed HFILE_DATA block of `records` (record key -> Avro record of `schema_json`), header INSTANT_TIME
    and SCHEMA. `created_ms`: the HFile's creation time (now when not given)."""
    content = write_avro_hfile(records, schema_json, block_size=LOG_BLOCK_HFILE_BLOCK_SIZE,
                               compression=compression, created_ms=created_ms, encoder=encoder)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.HFILE_DATA, header, content)


def encode_encoded_hfile_data_block(keys: pa.Array, values: pa.Array, schema_json: str, instant_time: str,
                                    compression: Compression = Compression.GZ,
                                    created_ms: int | None = None) -> bytes:
    """`encode_hfile_data_block` of records already encoded (`write_encoded_hfile`'s keys and values)."""
    content = write_encoded_hfile(keys, values, schema_json, block_size=LOG_BLOCK_HFILE_BLOCK_SIZE,
                                  compression=compression, created_ms=created_ms)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.HFILE_DATA, header, content)


def decode_hfile_data_block(block: LogBlock, path: str, decoder: Decoder | None = None) -> AvroHFileReader:
    """The records of an HFILE_DATA block: a reader for lookups by key, prefix scans or a full scan, decoding
    with the block's SCHEMA header (Hudi's writer schema for the block)."""
    require_type(block, BlockType.HFILE_DATA, path)
    where = f"{path} (HFILE_DATA block at byte {block.offset})"
    if not block.schema_json:
        raise CorruptTableError(f"{where}: no SCHEMA header")
    return AvroHFileReader(block.content, where, schema_json=block.schema_json, decoder=decoder)
