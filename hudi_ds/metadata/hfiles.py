"""The metadata table's files as Hudi writes them: HFile base files and the log blocks of its file slices.

Each is a thin layer over the codecs (`hudi_ds.hfile`, `hudi_ds.log`) that fixes what Hudi fixes: the record
schema text of the table version, a bloom filter of the keys in base files (60000 keys per row under Hudi 1.0,
10000 under Hudi 1.1; error rate 1e-9, at most 100000 keys before the rows fill round-robin, as read from the
reference tables and Hudi's defaults), and deletes as DELETE blocks naming the metadata partition with the
ordering value long 0.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import pyarrow as pa

from hudi_ds.hfile import BloomFilter, Compression, write_avro_hfile
from hudi_ds.hfile.avro_records import Encoder, write_encoded_hfile
from hudi_ds.log.blocks import encode_delete_block
from hudi_ds.log.hfile_block import encode_encoded_hfile_data_block, encode_hfile_data_block
from hudi_ds.metadata.avro_schema import metadata_schema_json

BLOOM_FPP = 1e-9
BLOOM_MAX_ENTRIES = 100_000  # hoodie.bloom.index.filter.dynamic.max.entries
_BLOOM_ENTRIES = {8: 60_000, 9: 10_000}


def base_file_bloom_filter(table_version: int) -> BloomFilter:
    """An empty bloom filter sized as Hudi sizes a metadata base file's for a data table of `table_version`."""
    if table_version not in _BLOOM_ENTRIES:
        raise ValueError(f"metadata base files are defined for table versions 8 and 9, not {table_version}")
    return BloomFilter(_BLOOM_ENTRIES[table_version], BLOOM_FPP, BLOOM_MAX_ENTRIES)


def encode_base_file(records: Mapping[str, dict[str, Any]], table_version: int, created_ms: int | None = None,
                     compression: Compression = Compression.GZ, encoder: Encoder | None = None) -> bytes:
    """A metadata base file (`<partition>-NNNN-0_<token>_<instant>.hfile`) holding `records` (key -> record)."""
    return write_avro_hfile(records, metadata_schema_json(table_version),
                            bloom_filter=base_file_bloom_filter(table_version), created_ms=created_ms,
                            compression=compression, encoder=encoder)


def encode_encoded_base_file(keys: pa.Array, values: pa.Array, table_version: int,
                             created_ms: int | None = None) -> bytes:
    """`encode_base_file` of records already encoded (`write_encoded_hfile`'s keys and values)."""
    return write_encoded_hfile(keys, values, metadata_schema_json(table_version),
                               bloom_filter=base_file_bloom_filter(table_version), created_ms=created_ms)


def encode_log_block(records: Mapping[str, dict[str, Any]], table_version: int, instant_time: str,
                     created_ms: int | None = None, compression: Compression = Compression.GZ,
                     encoder: Encoder | None = None) -> bytes:
    """An HFILE_DATA log block of `records` written by the deltacommit `instant_time`."""
    return encode_hfile_data_block(records, metadata_schema_json(table_version), instant_time,
                                   compression=compression, created_ms=created_ms, encoder=encoder)


def encode_encoded_log_block(keys: pa.Array, values: pa.Array, table_version: int, instant_time: str) -> bytes:
    """`encode_log_block` of records already encoded (`write_encoded_hfile`'s keys and values)."""
    return encode_encoded_hfile_data_block(keys, values, metadata_schema_json(table_version), instant_time)


def encode_delete_log_block(keys: Sequence[str], metadata_partition: str, instant_time: str) -> bytes:
    """A DELETE block removing `keys` from `metadata_partition` (e.g. record index entries of deleted rows)."""
    return encode_delete_block(keys, [metadata_partition] * len(keys), [0] * len(keys), "long", instant_time)
