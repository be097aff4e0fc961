"""Contents of Hudi log blocks (spec §4.3–§4.8): Avro/Parquet data blocks, delete blocks, rollback commands.

Encoders produce whole framed blocks; decoders take a LogBlock from `read_blocks` and return Arrow tables
shaped like the caller's table schema, because log blocks written before a schema change lack newer columns.
fastavro and pyarrow.parquet are imported by the functions that use them: Parquet blocks never need fastavro,
and `import hudi_ds` pays for neither (issue 32).
"""

from __future__ import annotations

import decimal
import functools
import io
import json
import struct
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import (
    CorruptTableError,
    InvalidDataError,
    SchemaError,
    UnsupportedTableError,
)
from hudi_ds.files.encoding import dictionary_columns
from hudi_ds.log.decoder_choice import (
    POLARS_DELETE_RECORDS,
    decoded_by_fastavro,
    encoded_by_numpy,
    use_polars,
    use_polars_encoder,
)
from hudi_ds.log.delete_scan import scan_delete_list
from hudi_ds.log.format import BlockType, HeaderKey, LogBlock, encode_block, require_type
from hudi_ds.log.polars_avro import (
    decode_polars,
    polars_container,
    polars_schema,
)
from hudi_ds.schema.avro import (
    arrow_to_avro_records,
    avro_records_to_arrow,
    avro_to_arrow,
    inline_named_references,
    parse_avro_json,
    to_wire_types,
    wire_schema,
)
from hudi_ds.schema.avro_binary import read_zigzag, zigzag
from hudi_ds.schema.avro_encode import encode_framed
from hudi_ds.schema.meta import fit_table, with_meta_avro

CONTENT_VERSION = 3  # HoodieLogBlock content version; older ones (1, 2) used Kryo and are not readable here
_I = struct.Struct(">i")
_II = struct.Struct(">ii")


# ------------------------------------------------------------------------------------------------- helpers


_SMALL = [zigzag(i) for i in range(64)]


def _avro_str(s: str) -> bytes:
    b = s.encode("utf-8")
    n = len(b)
    return (_SMALL[n] if n < 64 else zigzag(n)) + b


@functools.lru_cache(maxsize=128)
def _avro_codec(schema_json: str) -> tuple[Any, Any, pa.Schema]:
    """(parsed wire record schema, parsed array-of-records schema, Arrow schema), cached per schema string
    since every block of a table repeats the same header."""
    import fastavro

    wire = wire_schema(parse_avro_json(schema_json))
    record = fastavro.parse_schema(wire)
    array = fastavro.parse_schema({"type": "array", "items": wire})
    return record, array, _natural_schema(schema_json)


@functools.lru_cache(maxsize=128)
def _natural_schema(schema_json: str) -> pa.Schema:
    """The Arrow schema of a block's SCHEMA header: all a Parquet block needs of it (no fastavro)."""
    return avro_to_arrow(parse_avro_json(schema_json))


def _corrupt(path: str, block: LogBlock, what: str) -> CorruptTableError:
    return CorruptTableError(f"{path}: {block.block_type.name} block at byte {block.offset}: {what}")


def _check_version(content: bytes | memoryview, path: str, block: LogBlock) -> None:
    if len(content) < 8:
        raise _corrupt(path, block, "content shorter than its version and count fields")
    (version,) = _I.unpack_from(content, 0)
    if version in (1, 2):
        raise UnsupportedTableError(
            f"{path}: {block.block_type.name} block at byte {block.offset} uses legacy content version "
            f"{version} (pre-0.10 Hudi); compact the table with Hudi first")
    if version != CONTENT_VERSION:
        raise _corrupt(path, block, f"unknown content version {version}")


# ------------------------------------------------------------------------------------------------- writing


def _prepare_for_write(table: pa.Table, schema_json: str) -> pa.Table:
    """`table` in the Arrow types of the Avro writer schema (its JSON: converted once per schema, as the blocks
    of a write share it); columns unknown to the schema are an error."""
    target = _natural_schema(schema_json)
    extra = [c for c in table.column_names if c not in target.names]
    if extra:
        raise SchemaError(f"columns {extra} are not in the table schema {target.names}")
    return fit_table(table, target, "<write>")


# ------------------------------------------------------------------------------------------------- avro data


def encode_avro_data_block(table: pa.Table, avro_schema: dict[str, Any], instant_time: str,
                           partial: bool = False) -> bytes:
    """AVRO_DATA block (content version 3) of `table`'s rows, header INSTANT_TIME + SCHEMA (full schema with
    meta fields; added if `avro_schema` lacks them). `partial`: the rows of a partial update, `avro_schema` the
    columns it carries (header IS_PARTIAL, as Hudi 1.1 writes them)."""
    full = with_meta_avro(avro_schema)
    schema_json = json.dumps(full, separators=(",", ":"))
    content = avro_records_content(table, full, schema_json)
    return encode_block(BlockType.AVRO_DATA, _data_header(instant_time, schema_json, partial), content)


def _data_header(instant_time: str, schema_json: str, partial: bool) -> dict[HeaderKey, str]:
    header = {HeaderKey.INSTANT_TIME: instant_time, HeaderKey.SCHEMA: schema_json}
    if partial:
        header[HeaderKey.IS_PARTIAL] = "true"
    return header


def avro_records_content(table: pa.Table, avro_schema: dict[str, Any], schema_json: str) -> bytes:
    """The content of an Avro-encoded block (HoodieAvroDataBlock and the CDC block that extends it): version,
    record count, then each record's length and Avro datum."""
    prepared = _prepare_for_write(table, schema_json)
    native = use_polars_encoder(prepared.num_rows)
    try:
        framed = encode_framed(to_wire_types(prepared), inline_named_references(wire_schema(avro_schema)), native)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise InvalidDataError(f"rows cannot be encoded with the table's Avro schema: {exc}") from exc
    if framed is not None:
        if not native:
            encoded_by_numpy(prepared.num_rows)
        return _II.pack(CONTENT_VERSION, prepared.num_rows) + framed
    import fastavro

    parsed, _, _ = _avro_codec(schema_json)
    records = arrow_to_avro_records(prepared)
    buf = io.BytesIO()
    ends = []
    write = fastavro.schemaless_writer
    try:
        for rec in records:
            write(buf, parsed, rec)
            ends.append(buf.tell())
    except (ValueError, TypeError, OverflowError, decimal.InvalidOperation) as exc:
        raise InvalidDataError(f"row cannot be encoded with the table's Avro schema: {exc}") from exc
    data = buf.getbuffer()
    parts: list[bytes | memoryview] = [_II.pack(CONTENT_VERSION, len(records))]
    start = 0
    for end in ends:
        parts.append(_I.pack(end - start))
        parts.append(data[start:end])
        start = end
    content = b"".join(parts)
    del data
    return content


def decode_avro_data_block(block: LogBlock, path: str, arrow_schema: pa.Schema | None = None,
                           block_type: BlockType = BlockType.AVRO_DATA) -> pa.Table:
    """Rows of an AVRO_DATA block (or of a CDC block, Avro too) decoded with its SCHEMA header as writer schema;
    shaped to `arrow_schema` when given (older blocks lack newer columns)."""
    table = decode_avro_blocks([(path, block)], block_type)
    return fit_table(table, arrow_schema, path) if arrow_schema is not None else table


def decode_avro_blocks(blocks: Sequence[tuple[str, LogBlock]], block_type: BlockType) -> pa.Table:
    """The records of Avro-encoded blocks (path, block) written with one schema, in order: decoded in one pass
    (one container file for polars' reader), block by block through fastavro when polars cannot."""
    path, first = blocks[0]
    schema_json = first.schema_json
    for p, b in blocks:
        require_type(b, block_type, p)
        if not b.schema_json:
            raise _corrupt(p, b, "no SCHEMA header")
        if b.schema_json != schema_json:
            raise ValueError("decode_avro_blocks takes blocks of one schema")
    assert schema_json is not None
    try:
        _, array_schema, natural = _avro_codec(schema_json)
        framed = polars_schema(schema_json)
    except Exception as exc:  # invalid JSON, unknown Avro types, fastavro parse errors
        raise _corrupt(path, first, f"unusable SCHEMA header ({type(exc).__name__}: {exc})") from exc
    for p, b in blocks:
        _check_version(b.content, p, b)
    count = sum(_I.unpack_from(b.content, 4)[0] for _, b in blocks)
    if framed is not None and count > 0 and use_polars(count):
        pieces = [memoryview(b.content)[8:] for _, b in blocks]
        table = decode_polars(framed, count, pieces, natural, path)
        if table is not None:
            return table
    tables = []
    for p, b in blocks:
        n, records = _record_bytes(b, p)
        tables.append(_decode_fastavro(array_schema, n, records, natural, b, p))
        decoded_by_fastavro(n)
    return pa.concat_tables(tables) if len(tables) > 1 else tables[0]


def _record_bytes(block: LogBlock, path: str) -> tuple[int, bytes]:
    """(record count, the records' Avro datums concatenated without their 4-byte length prefixes)."""
    content = block.content
    _check_version(content, path, block)
    (count,) = _I.unpack_from(content, 4)
    pos, size, pieces = 8, len(content), []
    unpack = _I.unpack_from
    if count < 0 or count > size:
        raise _corrupt(path, block, f"impossible record count {count}")
    try:
        for _ in range(count):
            (length,) = unpack(content, pos)
            pos += 4
            if length < 0 or pos + length > size:
                raise _corrupt(path, block, f"record length {length} runs past the content")
            pieces.append(content[pos:pos + length])
            pos += length
    except struct.error as exc:
        raise _corrupt(path, block, f"truncated record list ({exc})") from exc
    return count, b"".join(pieces)


def _decode_fastavro(array_schema: Any, count: int, body: bytes, natural: pa.Schema, block: LogBlock,
                     path: str) -> pa.Table:
    # Back-to-back Avro datums framed as one Avro array decode in a single fastavro call.
    import fastavro

    buf = (zigzag(count) if count else b"") + body + b"\x00"
    bio = io.BytesIO(buf)
    try:
        records = fastavro.schemaless_reader(bio, array_schema, None)
    except Exception as exc:  # fastavro raises assorted exception types on bad bytes
        raise _corrupt(path, block, f"undecodable Avro records ({type(exc).__name__}: {exc})") from exc
    if bio.tell() != len(buf) or len(records) != count:  # type: ignore[arg-type]
        raise _corrupt(path, block, "record lengths do not match the Avro encoding")
    try:
        return avro_records_to_arrow(records, natural)  # type: ignore[arg-type]
    except InvalidDataError as exc:
        raise _corrupt(path, block, str(exc)) from exc


# --------------------------------------------------------------------------------------------- parquet data


def encode_parquet_data_block(table: pa.Table, avro_schema: dict[str, Any], instant_time: str,
                              compression: str = "snappy", use_dictionary: list[str] | None = None,
                              partial: bool = False) -> bytes:
    """PARQUET_DATA block: content is a complete parquet file (no version prefix) typed by the Avro schema.
    `use_dictionary`: the columns to dictionary-encode (default: judged on the rows, see dictionary_columns).
    `partial`: as for encode_avro_data_block."""
    full = with_meta_avro(avro_schema)
    schema_json = json.dumps(full, separators=(",", ":"))
    data = _prepare_for_write(table, schema_json)
    import pyarrow.parquet as pq

    sink = pa.BufferOutputStream()
    dictionary = dictionary_columns(data) if use_dictionary is None else use_dictionary
    # no min/max statistics: every reader decodes a log block whole (they cost a fifth of a small block's write)
    pq.write_table(data, sink, compression=compression, store_schema=False, use_dictionary=dictionary,
                   write_statistics=False)
    return encode_block(BlockType.PARQUET_DATA, _data_header(instant_time, schema_json, partial),
                        sink.getvalue().to_pybytes())


# a block this size or larger decodes its columns on Arrow's threads; a smaller one (an upsert's block in a file
# group: thousands of rows) costs a fifth more CPU so, for no gain when a read decodes slices on threads of its own
_THREADED_BLOCK_BYTES = 4 << 20


def decode_parquet_data_block(block: LogBlock, path: str, arrow_schema: pa.Schema | None = None,
                              dictionaries: frozenset[str] = frozenset()) -> pa.Table:
    """Rows of a PARQUET_DATA block, typed like its SCHEMA header (so they match Avro blocks) and shaped to
    `arrow_schema` when given. The string columns among `dictionaries` that the block stores as small
    dictionaries (meta columns of one value per commit, partition columns) stay dictionary-encoded: a compaction
    keeps them so, where decoding them took a third of a block's read."""
    import pyarrow.parquet as pq

    from hudi_ds.files.base_file import few_valued_strings

    require_type(block, BlockType.PARQUET_DATA, path)
    try:
        buffer = pa.BufferReader(pa.py_buffer(block.content))
        metadata = pq.read_metadata(buffer) if dictionaries else None
        few = [c for c in few_valued_strings(metadata) if c in dictionaries] if metadata is not None else None
        source = pq.ParquetFile(buffer, metadata=metadata, read_dictionary=few)
        wanted = None if arrow_schema is None else set(arrow_schema.names)
        table = source.read(columns=None if wanted is None or wanted.issuperset(source.schema_arrow.names)
                            else [c for c in source.schema_arrow.names if c in wanted],
                            use_threads=len(block.content) >= _THREADED_BLOCK_BYTES)
    except (pa.ArrowException, OSError, ValueError) as exc:
        raise _corrupt(path, block, f"unreadable parquet content ({exc})") from exc
    table = table.replace_schema_metadata(None)
    if block.schema_json:
        try:
            natural = _natural_schema(block.schema_json)
        except Exception as exc:  # invalid JSON, unknown Avro types
            raise _corrupt(path, block, f"unusable SCHEMA header ({type(exc).__name__}: {exc})") from exc
        if arrow_schema is not None:  # the columns read only: the others would be made null, then dropped
            natural = pa.schema([f for f in natural if f.name in table.column_names])
        table = fit_table(table, natural, path, dictionaries)
    return fit_table(table, arrow_schema, path, dictionaries) if arrow_schema is not None else table


# ------------------------------------------------------------------------------------------------- deletes

# HoodieDeleteRecordList as in apache/hudi 0.14–1.1 and hudi-rs (crates/core/schemas): 13-branch orderingVal.
_ORDERING_UNION: list[Any] = [
    "null", "int", "long", "float", "double", "bytes", "string",
    {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
    {"type": "int", "logicalType": "date"},
    {"type": "int", "logicalType": "time-millis"},
    {"type": "long", "logicalType": "time-micros"},
    {"type": "long", "logicalType": "timestamp-millis"},
    {"type": "long", "logicalType": "timestamp-micros"},
]
DELETE_RECORD_LIST_SCHEMA: dict[str, Any] = {
    "type": "record", "name": "HoodieDeleteRecordList", "namespace": "org.apache.hudi.avro.model",
    "fields": [{"name": "deleteRecordList", "type": {"type": "array", "items": {
        "type": "record", "name": "HoodieDeleteRecord", "fields": [
            {"name": "recordKey", "type": ["null", "string"], "default": None},
            {"name": "partitionPath", "type": ["null", "string"], "default": None},
            {"name": "orderingVal", "type": _ORDERING_UNION, "default": None},
        ]}}}],
}


@functools.cache
def _parsed_delete_schema() -> Any:
    import fastavro

    return fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA)


@dataclass(frozen=True)
class DeleteRecords:
    """Keys deleted by one DELETE block; `natural[i]` marks Hudi's "no event time" ordering value (null, int 0
    or long 0): such a delete wins by commit order instead of by ordering value."""

    record_keys: pa.Array  # string
    partition_paths: pa.Array  # string, null where the writer left it out
    ordering_values: pa.Array  # typed by the union branch the block uses
    natural: np.ndarray  # bool


def natural_deletes(ordering: pa.Array) -> np.ndarray:
    """Hudi's "no event time" delete marker: a null, or an integer 0, ordering value."""
    natural = pc.is_null(ordering)
    if pa.types.is_integer(ordering.type):
        natural = pc.or_(natural, pc.fill_null(pc.equal(ordering, 0), False))
    return np.asarray(natural.to_numpy(zero_copy_only=False), dtype=bool)


def _int_range(bits: int) -> Callable[[Any], bytes]:
    lo, hi = -(1 << (bits - 1)), (1 << (bits - 1)) - 1

    def enc(v: Any) -> bytes:
        if isinstance(v, bool) or not isinstance(v, int) or not lo <= v <= hi:
            raise InvalidDataError(f"ordering value {v!r} is not an int{bits}")
        return _SMALL[v] if 0 <= v < 64 else zigzag(v)

    return enc


# ordering_type -> (union branch index, value encoder)
_ORDERING_ENCODERS: dict[str, tuple[int, Callable[[Any], bytes]]] = {
    "int": (1, _int_range(32)),
    "long": (2, _int_range(64)),
    "float": (3, lambda v: struct.pack("<f", float(v))),
    "double": (4, lambda v: struct.pack("<d", float(v))),
    "bytes": (5, lambda v: zigzag(len(v)) + bytes(v)),
    "string": (6, lambda v: _avro_str(str(v))),
}
_ZERO: dict[str, Any] = {"float": 0.0, "double": 0.0}


def encode_delete_block(record_keys: Sequence[str], partition_paths: Sequence[str | None],
                        ordering_values: Sequence[Any], ordering_type: str | None, instant_time: str) -> bytes:
    """DELETE block. Each orderingVal uses the union branch of `ordering_type` (hudi-rs ignores deletes whose
    branch differs from the ordering column's type); None values become that type's zero ("natural order").
    With no ordering field (`ordering_type` None) every record gets `int 0`, as Spark writes."""
    n = len(record_keys)
    if len(partition_paths) != n or (ordering_type is not None and len(ordering_values) != n):
        raise InvalidDataError("record_keys, partition_paths and ordering_values must have the same length")
    if ordering_type is None:
        ordering = [b"\x02\x00"] * n
    else:
        if ordering_type not in _ORDERING_ENCODERS:
            raise SchemaError(f"ordering field type {ordering_type!r} is not supported for deletes; expected "
                              f"one of {sorted(_ORDERING_ENCODERS)}")
        branch, enc = _ORDERING_ENCODERS[ordering_type]
        prefix = _SMALL[branch]
        zero = None if ordering_type in ("string", "bytes") else prefix + enc(_ZERO.get(ordering_type, 0))
        ordering = []
        for v in ordering_values:
            if v is None:
                if zero is None:
                    raise InvalidDataError(f"a delete needs the record's current ordering value for a "
                                           f"{ordering_type} ordering field (null is not allowed)")
                ordering.append(zero)
            else:
                ordering.append(prefix + enc(v))
    parts = [zigzag(n)] if n else []
    for key, part, order in zip(record_keys, partition_paths, ordering, strict=True):
        if key is None:
            raise InvalidDataError("a delete record key must not be null")
        parts.append(b"\x02" + _avro_str(key))
        parts.append(b"\x00" if part is None else b"\x02" + _avro_str(part))
        parts.append(order)
    parts.append(b"\x00")
    payload = b"".join(parts)
    content = _II.pack(CONTENT_VERSION, len(payload)) + payload
    return encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: instant_time}, content)


def decode_delete_block(block: LogBlock, path: str) -> DeleteRecords:
    """Keys, partition paths and ordering values of a DELETE block (content version 3): a large list through
    polars when it is loaded, else hudi_ds.log.delete_scan; what neither reads through fastavro."""
    require_type(block, BlockType.DELETE, path)
    content = block.content
    _check_version(content, path, block)
    (length,) = _I.unpack_from(content, 4)
    if length < 0 or 8 + length > len(content):
        raise _corrupt(path, block, f"delete list length {length} runs past the content")
    body = bytes(content[8:8 + length])
    count = _delete_count(body)
    records = _delete_records_polars(body) if "polars" in sys.modules and count >= POLARS_DELETE_RECORDS else None
    records = records or _delete_records_scanned(body)
    if records is None and use_polars(count):
        records = _delete_records_polars(body)
    records = records or _delete_records_fastavro(body, path, block)
    if records.record_keys.null_count:
        raise _corrupt(path, block, "a delete record has a null record key")
    return records


# orderingVal union branches polars decodes (the logical-type branches take fastavro)
_PLAIN_BRANCHES = {0: None, 1: "int", 2: "long", 3: "float", 4: "double", 5: "bytes", 6: "string"}


def _delete_records_polars(body: bytes) -> DeleteRecords | None:
    """The delete list through polars' Avro reader, when every record's orderingVal takes the union branch
    of the first one (the case for Hudi's writers: one ordering type per table). polars cannot read that
    13-branch union, but a branch index followed by its value encodes exactly like a record of an `int`
    and a value of the branch's type; a record on another branch shows up as a different index. None: use
    fastavro."""
    branch = _first_ordering_branch(body)
    if branch not in _PLAIN_BRANCHES:
        return None
    value_type = _PLAIN_BRANCHES[branch]
    fields = [{"name": "branch", "type": "int"}] + ([{"name": "value", "type": value_type}] if value_type else [])
    items = DELETE_RECORD_LIST_SCHEMA["fields"][0]["type"]["items"]
    record = {**items, "fields": [*items["fields"][:2], {"name": "orderingVal", "type": {
        "type": "record", "name": "HudiDsOrderingBranch", "fields": fields}}]}
    schema = {**DELETE_RECORD_LIST_SCHEMA, "fields": [{"name": "deleteRecordList", "type": {
        "type": "array", "items": record}}]}
    table = polars_container(json.dumps(schema), 1, [body])
    if table is None:
        return None
    rows = pc.list_flatten(table["deleteRecordList"].combine_chunks())
    ordering = pc.struct_field(rows, "orderingVal")
    if len(rows) and pc.any(pc.not_equal(pc.struct_field(ordering, "branch"), branch)).as_py():
        return None
    value = pc.struct_field(ordering, "value") if value_type else pa.nulls(len(rows))
    return DeleteRecords(pc.struct_field(rows, "recordKey").cast(pa.string()),
                         pc.struct_field(rows, "partitionPath").cast(pa.string()), value, natural_deletes(value))


def _delete_records_scanned(body: bytes) -> DeleteRecords | None:
    """The delete list through hudi_ds.log.delete_scan (None: a list it does not read)."""
    found = scan_delete_list(body)
    if found is None:
        return None
    keys, parts, ordering = found
    return DeleteRecords(keys, parts, ordering, natural_deletes(ordering))


def _delete_count(body: bytes) -> int:
    """The number of records of the delete list's first Avro array block (0 when unreadable: the decoder
    names the damage)."""
    try:
        return abs(read_zigzag(body, 0)[0])
    except IndexError:
        return 0


def _first_ordering_branch(body: bytes) -> int | None:
    """The orderingVal union branch of the list's first record (None: an empty or unexpected list)."""
    try:
        pos = 0
        count, pos = read_zigzag(body, pos)
        if count < 0:
            _, pos = read_zigzag(body, pos)  # a negative count is followed by the block's byte size
        if count == 0:
            return None
        for _ in range(2):  # recordKey, partitionPath: ["null", "string"]
            present, pos = read_zigzag(body, pos)
            if present:
                size, pos = read_zigzag(body, pos)
                pos += size
        return read_zigzag(body, pos)[0]
    except IndexError:
        return None


def _delete_records_fastavro(body: bytes, path: str, block: LogBlock) -> DeleteRecords:
    """The reference decoder: any branch mix, logical types included."""
    import fastavro

    try:
        decoded = fastavro.schemaless_reader(io.BytesIO(body), _parsed_delete_schema(), None)
    except Exception as exc:  # fastavro raises assorted exception types on bad bytes
        raise _corrupt(path, block, f"undecodable delete list ({type(exc).__name__}: {exc})") from exc
    items: list[dict[str, Any]] = decoded["deleteRecordList"]  # type: ignore[index,call-overload,assignment]
    values = [r["orderingVal"] for r in items]
    try:
        ordering = pa.array(values)
    except (pa.ArrowInvalid, pa.ArrowTypeError):  # branches of several types in one block
        ordering = pa.array([None if v is None else str(v) for v in values], pa.string())
    natural = np.array([v is None or (type(v) is int and v == 0) for v in values], dtype=bool)
    decoded_by_fastavro(len(items))
    return DeleteRecords(pa.array([r["recordKey"] for r in items], pa.string()),
                         pa.array([r["partitionPath"] for r in items], pa.string()), ordering, natural)


# ------------------------------------------------------------------------------------------------- commands


def encode_rollback_block(rollback_instant: str, target_instant: str) -> bytes:
    """COMMAND block (ROLLBACK) masking every block whose INSTANT_TIME is `target_instant`."""
    header = {HeaderKey.INSTANT_TIME: rollback_instant, HeaderKey.TARGET_INSTANT_TIME: target_instant,
              HeaderKey.COMMAND_BLOCK_TYPE: "0"}
    return encode_block(BlockType.COMMAND, header, b"")
