"""Change-data (CDC) blocks: Apache Hudi's HoodieCDCDataBlock, an Avro data block of log block type 6.

Its records follow the table's supplemental logging mode (HoodieCDCUtils):
- OP_KEY_ONLY: `op`, `record_key`;
- DATA_BEFORE: `op`, `record_key`, `before` (the row before the change, data columns only);
- DATA_BEFORE_AFTER: `op`, `ts_ms` (the commit time), `before`, `after`.
`op` is "i" (insert), "u" (update) or "d" (delete); images are the data columns without the meta columns, null
where there is none (no before-image for an insert, no after-image for a delete).
"""

from __future__ import annotations

import json
import struct
from typing import Any

import pyarrow as pa

from hudi_ds.log.blocks import avro_records_content, decode_avro_blocks, decode_avro_data_block
from hudi_ds.log.format import BlockType, HeaderKey, LogBlock, encode_block

INSERT, UPDATE, DELETE = "i", "u", "d"
OP, RECORD_KEY, TS, BEFORE, AFTER = "op", "record_key", "ts_ms", "before", "after"
MODES = ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER")


def _nullable(avro_type: Any) -> dict[str, Any]:
    return {"type": ["null", avro_type], "default": None}


def cdc_schema(mode: str, data_schema: dict[str, Any]) -> dict[str, Any]:
    """The Avro schema of a CDC block's records for `mode`, the images being `data_schema` (an Avro record of
    the data columns). The `after` image names the `before` image's record, as Avro allows a name once."""
    if mode == "OP_KEY_ONLY":
        return {"type": "record", "name": "Record", "fields": [
            {"name": OP, "type": ["string", "null"]}, {"name": RECORD_KEY, "type": ["string", "null"]}]}
    image = {k: v for k, v in data_schema.items() if k != "doc"}
    full = f"{image['namespace']}.{image['name']}" if image.get("namespace") else image["name"]
    fields = [{"name": OP, **_nullable("string")}]
    if mode == "DATA_BEFORE":
        fields += [{"name": RECORD_KEY, **_nullable("string")}, {"name": BEFORE, **_nullable(image)}]
    elif mode == "DATA_BEFORE_AFTER":
        fields += [{"name": TS, **_nullable("string")}, {"name": BEFORE, **_nullable(image)},
                   {"name": AFTER, **_nullable(full)}]
    else:
        raise ValueError(f"unknown CDC supplemental logging mode {mode!r}")
    out: dict[str, Any] = {"type": "record", "name": "CDC", "fields": fields}
    if image.get("namespace"):
        out["namespace"] = image["namespace"]
    return out


def encode_cdc_block(records: pa.Table, schema: dict[str, Any], instant_time: str) -> bytes:
    """A CDC block of `records` (columns named as `schema`'s fields; images as struct columns)."""
    schema_json = json.dumps(schema, separators=(",", ":"))
    content = avro_records_content(records, schema, schema_json)
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    return encode_block(BlockType.CDC_DATA, header, content)


def decode_cdc_block(block: LogBlock, path: str) -> pa.Table:
    """The records of a CDC block, images as struct columns in the block's own schema."""
    return decode_avro_data_block(block, path, block_type=BlockType.CDC_DATA)


def decode_cdc_blocks(blocks: list[tuple[str, LogBlock]]) -> pa.Table:
    """The records of several CDC blocks (path, block), in order; runs of blocks written with one schema decode in
    one pass."""
    runs: list[list[tuple[str, LogBlock]]] = []
    for item in blocks:
        if runs and runs[-1][0][1].schema_json == item[1].schema_json:
            runs[-1].append(item)
        else:
            runs.append([item])
    tables = [decode_avro_blocks(run, BlockType.CDC_DATA) for run in runs]
    return pa.concat_tables(tables, promote_options="permissive") if len(tables) > 1 else tables[0]


def record_count(block: LogBlock) -> int:
    """The number of records a CDC (or Avro data) block says it holds."""
    return int(struct.unpack_from(">i", block.content, 4)[0])
