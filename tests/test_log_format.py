"""Log file framing and block contents (hudi_ds.log): property round trips, damage handling, exact bytes, the
real Spark-written log files of the reference tables, and interop with the independent reader hudi-rs."""

from __future__ import annotations

import datetime as dt
import decimal
import io
import json
import os
import re
import struct
import zlib
from collections.abc import Callable
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from hudi_ds.errors import CorruptTableError, HudiDsError, SchemaError, UnsupportedTableError
from hudi_ds.log import (
    CONTENT_VERSION,
    DELETE_RECORD_LIST_SCHEMA,
    MAGIC,
    BlockType,
    HeaderKey,
    LogBlock,
    decode_avro_data_block,
    decode_delete_block,
    decode_parquet_data_block,
    encode_avro_data_block,
    encode_block,
    encode_delete_block,
    encode_parquet_data_block,
    encode_rollback_block,
    polars_avro,
    read_blocks,
)
from hudi_ds.log import blocks as blocks_module
from hudi_ds.schema import (
    META_COLUMNS,
    arrow_to_avro,
    avro_records_to_arrow,
    avro_to_arrow,
    fit_table,
    with_meta,
)

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
T1, T2 = "20240101000000000", "20240102000000000"

# ------------------------------------------------------------------------------------------ framing


headers = st.dictionaries(
    st.sampled_from([HeaderKey.INSTANT_TIME, HeaderKey.TARGET_INSTANT_TIME, HeaderKey.SCHEMA,
                     HeaderKey.COMMAND_BLOCK_TYPE]),
    st.text(max_size=40))
block_specs = st.tuples(st.sampled_from([BlockType.COMMAND, BlockType.DELETE, BlockType.AVRO_DATA,
                                         BlockType.PARQUET_DATA]), headers, st.binary(max_size=200))


@SETTINGS
@given(st.lists(block_specs, min_size=1, max_size=5))
def test_framing_round_trip(specs: list[tuple[BlockType, dict[HeaderKey, str], bytes]]) -> None:
    data = b"".join(encode_block(t, h, c) for t, h, c in specs)
    blocks = read_blocks(data, "f.log")
    assert [(b.block_type, b.header, bytes(b.content)) for b in blocks] == specs
    offset = 0
    for block in blocks:
        assert block.offset == offset and data[offset:offset + 6] == MAGIC
        (block_len,) = struct.unpack_from(">q", data, offset + 6)
        assert block.size == block_len + 14
        assert struct.unpack_from(">q", data, offset + block.size - 8)[0] == block_len + 6  # reverse pointer
        offset += block.size
    assert offset == len(data)


@SETTINGS
@given(st.lists(block_specs, min_size=1, max_size=3), st.data())
def test_truncation_never_raises(specs: list[tuple[BlockType, dict[HeaderKey, str], bytes]],
                                 data: Any) -> None:
    encoded = [encode_block(t, h, c) for t, h, c in specs]
    whole = b"".join(encoded)
    assume(whole.count(MAGIC) == len(specs))  # contents that embed a magic legitimately split differently
    cut = data.draw(st.integers(0, len(whole)))
    _check_truncated(encoded, whole[:cut])


def _check_truncated(encoded: list[bytes], truncated: bytes) -> None:
    blocks = read_blocks(truncated, "f.log")
    intact, end = 0, 0
    while intact < len(encoded) and end + len(encoded[intact]) <= len(truncated):
        end += len(encoded[intact])
        intact += 1
    assert all(b.block_type != BlockType.CORRUPT for b in blocks[:intact])
    if end == len(truncated):
        assert len(blocks) == intact
        return
    assert len(blocks) == intact + 1, blocks
    tail = blocks[-1]
    assert tail.block_type == BlockType.CORRUPT and tail.offset == end and tail.size == len(truncated) - end
    assert bytes(tail.content) == truncated[end:]
    # the instant of a block whose header survived stays readable, so the reader can judge the damage
    original = read_blocks(encoded[intact], "f.log")[0]
    header_end = 22 + len(_header_bytes(original))
    if len(truncated) - end >= header_end:
        assert tail.header == original.header


def _header_bytes(block: LogBlock) -> bytes:
    return encode_block(block.block_type, block.header, b"")[22:-20]  # type: ignore[arg-type]


def test_truncation_at_every_byte_of_real_blocks() -> None:
    table = _sample_table(3)
    encoded = [encode_avro_data_block(table, arrow_to_avro(table.schema, "t"), T1),
               encode_delete_block(["k1", "k2"], ["p", "p"], [1, 2], "long", T2),
               encode_rollback_block(T2, T1)]
    whole = b"".join(encoded)
    for cut in range(len(whole) + 1):
        _check_truncated(encoded, whole[:cut])


def test_damage_in_the_middle_is_isolated() -> None:
    a = encode_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: T1}, b"aaaa")
    b = encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: T2}, b"bbbb")
    c = encode_block(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: "3"}, b"")
    bad_pointer = b[:-8] + struct.pack(">q", 12345)
    blocks = read_blocks(a + bad_pointer + c, "f.log")
    assert [x.block_type for x in blocks] == [BlockType.AVRO_DATA, BlockType.CORRUPT, BlockType.COMMAND]
    assert blocks[1].instant_time == T2 and blocks[1].size == len(b)
    # a block length pointing past the next magic (e.g. a torn write followed by a retry)
    torn = b[:-10]  # header intact, tail missing
    blocks = read_blocks(a + torn + c, "f.log")
    assert [x.block_type for x in blocks] == [BlockType.AVRO_DATA, BlockType.CORRUPT, BlockType.COMMAND]
    assert blocks[1].instant_time == T2
    # garbage before the first block and between blocks
    blocks = read_blocks(b"junk" + a + b"xx" + c, "f.log")
    assert [x.block_type for x in blocks] == [BlockType.CORRUPT, BlockType.CORRUPT, BlockType.COMMAND]
    assert blocks[0].size == 4 and blocks[1].size == len(a) + 2
    assert read_blocks(b"", "f.log") == []


def test_unknown_header_keys_are_kept_as_ints() -> None:
    head = struct.pack(">i", 3) + b"".join(struct.pack(">ii", k, len(v)) + v for k, v in
                                          [(0, b"123"), (5, b"pos"), (42, b"future")])
    body = struct.pack(">ii", 1, 3) + head + struct.pack(">q", 2) + b"hi" + struct.pack(">i", 0)
    block_len = len(body) + 8
    data = MAGIC + struct.pack(">q", block_len) + body + struct.pack(">q", block_len + 6)
    (block,) = read_blocks(data, "f.log")
    assert block.header == {HeaderKey.INSTANT_TIME: "123", HeaderKey.RECORD_POSITIONS: "pos", 42: "future"}
    assert block.block_type == BlockType.AVRO_DATA and bytes(block.content) == b"hi"


def test_unknown_block_type_or_version_with_valid_framing_is_unsupported() -> None:
    good = encode_block(BlockType.COMMAND, {HeaderKey.INSTANT_TIME: T1}, b"")
    with pytest.raises(UnsupportedTableError, match=r"f\.log.*block type 9"):
        read_blocks(good[:18] + struct.pack(">i", 9) + good[22:], "f.log")
    with pytest.raises(UnsupportedTableError, match=r"f\.log.*version 2"):
        read_blocks(good[:14] + struct.pack(">i", 2) + good[18:], "f.log")


def test_only_java_014_header_keys_are_written() -> None:
    with pytest.raises(HudiDsError, match="ordinals > 3"):
        encode_block(BlockType.AVRO_DATA, {HeaderKey.RECORD_POSITIONS: "x"}, b"")


def test_delete_block_bytes_follow_the_recipe() -> None:
    """§4.8 by hand: one delete of key "k1" in partition "p" with long orderingVal 5 at instant T1."""
    payload = bytes([
        0x02,                    # array block of 1 item (zigzag 1)
        0x02, 0x04, *b"k1",      # recordKey: union branch 1 (string), length 2
        0x02, 0x02, *b"p",       # partitionPath: branch 1, length 1
        0x04, 0x0A,              # orderingVal: branch 2 (long), zigzag(5) = 10
        0x00,                    # end of array
    ])
    content = bytes.fromhex("00000003") + struct.pack(">i", len(payload)) + payload
    header = bytes.fromhex("00000001" "00000000" "00000011") + T1.encode()
    block_len = 4 + 4 + len(header) + 8 + len(content) + 4 + 8
    expected = (b"#HUDI#" + struct.pack(">q", block_len) + bytes.fromhex("00000001" "00000001") + header
                + struct.pack(">q", len(content)) + content + bytes(4) + struct.pack(">q", block_len + 6))
    assert encode_delete_block(["k1"], ["p"], [5], "long", T1) == expected
    assert block_len == 76


def test_rollback_block_bytes() -> None:
    (block,) = read_blocks(encode_rollback_block(T2, T1), "f.log")
    assert block.block_type == BlockType.COMMAND and bytes(block.content) == b""
    assert block.header == {HeaderKey.INSTANT_TIME: T2, HeaderKey.TARGET_INSTANT_TIME: T1,
                            HeaderKey.COMMAND_BLOCK_TYPE: "0"}
    assert block.instant_time == T2 and block.target_instant_time == T1 and block.schema_json is None


# ------------------------------------------------------------------------------------------ data blocks

_UTC = "UTC"


def _dec(unscaled: int, scale: int) -> decimal.Decimal:
    return decimal.Decimal(f"{unscaled}E-{scale}")  # exact, unlike scaleb() under the 28-digit context


_TS_US = st.integers(-62_000_000_000_000_000, 250_000_000_000_000_000)  # years 0005..9892
_COLUMNS: dict[str, tuple[pa.DataType, st.SearchStrategy[Any]]] = {
    "i32": (pa.int32(), st.integers(-(2**31), 2**31 - 1)),
    "i64": (pa.int64(), st.integers(-(2**63), 2**63 - 1)),
    "i8": (pa.int8(), st.integers(-128, 127)),
    "s": (pa.string(), st.text()),
    "ls": (pa.large_string(), st.text(max_size=5)),
    "f64": (pa.float64(), st.floats(allow_nan=False)),
    "f32": (pa.float32(), st.floats(width=32, allow_nan=False)),
    "b": (pa.bool_(), st.booleans()),
    "bin": (pa.binary(), st.binary()),
    "day": (pa.date32(), st.dates()),
    "ts_us": (pa.timestamp("us", tz=_UTC), _TS_US),
    "ts_ms": (pa.timestamp("ms", tz=_UTC), _TS_US.map(lambda v: v // 1000)),
    "lts_us": (pa.timestamp("us"), _TS_US),
    "ts_ns": (pa.timestamp("ns", tz=_UTC), st.integers(-(2**62), 2**62)),
    "tm": (pa.time32("ms"), st.integers(0, 86_399_999)),
    "tu": (pa.time64("us"), st.integers(0, 86_399_999_999)),
    "dec": (pa.decimal128(10, 2), st.integers(1 - 10**10, 10**10 - 1).map(lambda u: _dec(u, 2))),
    "dec38": (pa.decimal128(38, 5), st.integers(1 - 10**38, 10**38 - 1).map(lambda u: _dec(u, 5))),
    "lst": (pa.list_(pa.int64()), st.lists(st.none() | st.integers(-(2**63), 2**63 - 1), max_size=3)),
    "st": (pa.struct([("a", pa.int32()), ("b", pa.string())]),
           st.fixed_dictionaries({"a": st.none() | st.integers(0, 9), "b": st.none() | st.text(max_size=3)})),
    "lst_st": (pa.list_(pa.struct([("x", pa.float64()), ("d", pa.date32())])),
               st.lists(st.none() | st.fixed_dictionaries({"x": st.floats(allow_nan=False), "d": st.dates()}),
                        max_size=3)),
    "m": (pa.map_(pa.string(), pa.int64()),
          st.dictionaries(st.text(max_size=3), st.integers(0, 9), max_size=3).map(lambda d: list(d.items()))),
}


@st.composite
def tables(draw: st.DrawFn) -> pa.Table:
    names = draw(st.lists(st.sampled_from(sorted(_COLUMNS)), min_size=1, max_size=6, unique=True))
    n = draw(st.integers(0, 8))
    columns = {m: pa.array([f"{m}-{i}" for i in range(n)], pa.string()) for m in META_COLUMNS}
    for name in names:
        typ, values = _COLUMNS[name]
        columns[name] = pa.array(draw(st.lists(st.none() | values, min_size=n, max_size=n)), typ)
    return pa.table(columns)


def _expected(table: pa.Table) -> pa.Table:
    return fit_table(table, avro_to_arrow(arrow_to_avro(table.schema, "t")))


@SETTINGS
@given(tables())
def test_avro_data_block_round_trip(table: pa.Table) -> None:
    avro = arrow_to_avro(table.schema, "t")
    data = encode_avro_data_block(table, avro, T1)
    (block,) = read_blocks(data, "f.log")
    assert block.block_type == BlockType.AVRO_DATA and block.instant_time == T1
    assert json.loads(block.schema_json or "") == avro
    decoded = decode_avro_data_block(block, "f.log")
    assert decoded.equals(_expected(table))
    # independent check: each record decodes with plain fastavro against the header schema (logical types on)
    parsed = fastavro.parse_schema(json.loads(block.schema_json or ""))
    content, records = bytes(block.content), []
    version, count = struct.unpack_from(">ii", content)
    pos = 8
    for _ in range(count):
        (length,) = struct.unpack_from(">i", content, pos)
        datum = io.BytesIO(content[pos + 4:pos + 4 + length])
        records.append(fastavro.schemaless_reader(datum, parsed, None))
        pos += 4 + length
    assert (version, count, pos) == (3, table.num_rows, len(content))
    assert avro_records_to_arrow(records, decoded.schema).equals(decoded)  # type: ignore[arg-type]


# columns whose wire types polars writes under our schema's shape (its datums are taken, not the NumPy ones)
_POLARS_WRITES = {"i32", "i64", "i8", "s", "ls", "f64", "f32", "b", "bin", "day", "ts_us", "ts_ms", "lts_us",
                  "ts_ns", "tm", "tu", "st"}


@SETTINGS
@given(tables(), st.booleans())
def test_column_wise_avro_encoding_is_fastavros_byte_for_byte(table: pa.Table, native: bool) -> None:
    """The column-wise encoder (hudi_ds.schema.avro_encode) writes each record exactly as fastavro does, after
    the record's 4-byte big-endian length; with `native`, polars writes the datums where it can (checked to be
    taken for the types it writes)."""
    from hudi_ds.schema.avro import inline_named_references, to_wire_types, wire_schema
    from hudi_ds.schema.avro_encode import encode_framed
    from hudi_ds.schema.meta import with_meta_avro
    from hudi_ds.schema.polars_datums import polars_datums

    avro = with_meta_avro(arrow_to_avro(table.schema, "t"))
    wire = to_wire_types(fit_table(table, avro_to_arrow(avro)))
    framed = encode_framed(wire, inline_named_references(wire_schema(avro)), native)
    assume(framed is not None)  # decimals, lists and maps go through fastavro
    assert framed is not None
    if native and set(table.column_names) - set(META_COLUMNS) <= _POLARS_WRITES:
        assert polars_datums(wire, inline_named_references(wire_schema(avro))) is not None
    parsed = fastavro.parse_schema(wire_schema(avro))
    expected = io.BytesIO()
    for record in wire.to_pylist():
        buf = io.BytesIO()
        fastavro.schemaless_writer(buf, parsed, record)
        expected.write(struct.pack(">i", len(buf.getvalue())) + buf.getvalue())
    assert framed == expected.getvalue()

    if native and wire.num_rows > 1:  # columns chunked unlike each other, as a change-data block's are built
        split = pa.table({name: pa.chunked_array([wire[name][:k], wire[name][k:]], wire[name].type)
                          for k, name in ((1 + i % (wire.num_rows - 1), name)
                                          for i, name in enumerate(wire.column_names))})
        assert encode_framed(split, inline_named_references(wire_schema(avro)), native) == framed


def test_polars_writes_a_change_data_block_of_columns_chunked_unlike_each_other() -> None:
    """polars' Avro writer panicked (a Rust panic, no Exception) on columns chunked unlike each other: a CI run's
    change-data block of inserts, an update and a delete. They are written in one chunk a column."""
    from hudi_ds.schema.avro import inline_named_references, wire_schema
    from hudi_ds.schema.polars_datums import polars_datums

    image = pa.struct([("k", pa.string()), ("v", pa.int64())])
    rows = pa.StructArray.from_arrays([pa.array(["a", "b"]), pa.array([1, 2])], fields=list(image))
    block = pa.table({"op": pa.chunked_array([pa.array(["i"]), pa.array(["u", "u"]), pa.array(["d"])]),
                      "ts_ms": pa.array(["20261128121225163"] * 4),
                      "before": pa.chunked_array([pa.nulls(1, image), rows, pa.nulls(1, image)], image),
                      "after": pa.chunked_array([pa.nulls(2, image), rows.slice(0, 1), pa.nulls(1, image)], image)})
    avro = inline_named_references(wire_schema(arrow_to_avro(block.schema, "cdc")))
    datums = polars_datums(block, avro)
    assert datums is not None
    parsed = fastavro.parse_schema(avro)
    expected = io.BytesIO()
    for record in block.to_pylist():
        fastavro.schemaless_writer(expected, parsed, record)
    assert bytes(datums) == expected.getvalue()


@SETTINGS
@given(tables())
def test_polars_and_fastavro_decoders_agree(table: pa.Table) -> None:
    import polars  # noqa: F401  (loaded, so decode_avro_data_block takes polars' reader whatever the block's size)

    (block,) = read_blocks(encode_avro_data_block(table, arrow_to_avro(table.schema, "t"), T1), "f.log")
    count, body = blocks_module._record_bytes(block, "f.log")
    _, array_schema, natural = blocks_module._avro_codec(block.schema_json or "")
    reference = blocks_module._decode_fastavro(array_schema, count, body, natural, block, "f.log")
    assert decode_avro_data_block(block, "f.log").equals(reference)


def test_a_panic_in_polars_falls_back_to_the_reference_codecs(monkeypatch: pytest.MonkeyPatch) -> None:
    """polars' reader and writer answer a Rust panic (a BaseException, not an Exception) as any other failure:
    the reference codecs take the block."""
    import polars
    from polars.exceptions import PanicException

    def panics(*_: Any, **__: Any) -> None:
        raise PanicException("a panic inside polars")

    table = pa.table({"_hoodie_record_key": [f"k{i}" for i in range(50)], "v": list(range(50))})
    (block,) = read_blocks(encode_avro_data_block(table, arrow_to_avro(table.schema, "t"), T1), "f.log")
    expected = decode_avro_data_block(block, "f.log")
    monkeypatch.setattr(polars, "read_avro", panics)
    monkeypatch.setattr(polars.DataFrame, "write_avro", panics)
    assert decode_avro_data_block(block, "f.log").equals(expected)
    assert read_blocks(encode_avro_data_block(table, arrow_to_avro(table.schema, "t"), T1), "f.log") == [block]


@SETTINGS
@given(tables(), st.sampled_from(["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]), st.data())
def test_cdc_blocks_decode_alike_through_polars_and_fastavro(table: pa.Table, mode: str, data: Any) -> None:
    """CDC blocks of every supplemental logging mode, images of any column types (the `after` image naming the
    `before` record), decoded as the change feed decodes them (several blocks in one pass: polars' reader when
    it can read the schema) and block by block through the reference decoder (fastavro): the same records."""
    import polars  # noqa: F401  (loaded, so the blocks take polars' reader whatever their size)

    from hudi_ds.log.cdc_block import cdc_schema, decode_cdc_blocks, encode_cdc_block

    rows = table.drop_columns(list(META_COLUMNS))
    schema = cdc_schema(mode, arrow_to_avro(rows.schema, "t"))
    ops = data.draw(st.lists(st.sampled_from("iud"), min_size=rows.num_rows, max_size=rows.num_rows))
    children = [c.combine_chunks() for c in rows.columns]
    columns: dict[str, Any] = {"op": pa.array(ops, pa.string())}
    if mode != "DATA_BEFORE_AFTER":
        columns["record_key"] = pa.array([f"k{i}" for i in range(len(ops))], pa.string())
    else:
        columns["ts_ms"] = pa.array([T1] * len(ops), pa.string())
    if mode != "OP_KEY_ONLY":
        for name, none in (("before", "i"), ("after", "d")):
            if name == "after" and mode == "DATA_BEFORE":
                continue
            mask = pa.array([op == none for op in ops], pa.bool_())
            columns[name] = pa.StructArray.from_arrays(children, names=rows.column_names, mask=mask)
    records = pa.table(columns)
    halves = [records.slice(0, len(ops) // 2), records.slice(len(ops) // 2)]
    blocks = [("f.log", b) for half in halves for b in read_blocks(encode_cdc_block(half, schema, T1), "f.log")]
    _, array_schema, natural = blocks_module._avro_codec(blocks[0][1].schema_json or "")
    reference = pa.concat_tables([blocks_module._decode_fastavro(array_schema, *blocks_module._record_bytes(b, p),
                                                                 natural, b, p) for p, b in blocks])
    assert decode_cdc_blocks(blocks).equals(reference)
    assert reference.num_rows == len(ops) and reference["op"].to_pylist() == ops


@SETTINGS
@given(tables())
def test_parquet_data_block_round_trip(table: pa.Table) -> None:
    avro = arrow_to_avro(table.schema, "t")
    (block,) = read_blocks(encode_parquet_data_block(table, avro, T1), "f.log")
    assert block.block_type == BlockType.PARQUET_DATA and bytes(block.content[:4]) == b"PAR1"
    assert decode_parquet_data_block(block, "f.log").equals(_expected(table))
    raw = pq.read_table(pa.BufferReader(pa.py_buffer(block.content)))
    assert not any(pa.types.is_large_string(t) for t in raw.schema.types)
    assert b"ARROW:schema" not in (raw.schema.metadata or {})


def _sample_table(n: int) -> pa.Table:
    return pa.table({
        **{m: [f"{m}{i}" for i in range(n)] for m in META_COLUMNS},
        "id": pa.array(range(n), pa.int32()), "name": [f"n{i}" for i in range(n)],
    })


@pytest.mark.parametrize("kind", ["avro", "parquet"])
def test_data_block_schema_evolution(kind: str) -> None:
    old = _sample_table(2)
    encode = encode_avro_data_block if kind == "avro" else encode_parquet_data_block
    decode = decode_avro_data_block if kind == "avro" else decode_parquet_data_block
    (block,) = read_blocks(encode(old, arrow_to_avro(old.schema, "t"), T1), "f.log")
    target = pa.schema([*[pa.field(m, pa.string()) for m in META_COLUMNS], ("id", pa.int64()),
                        ("added", pa.float64())])
    out = decode(block, "f.log", target)
    assert out.schema.equals(target)
    assert out.column("id").to_pylist() == [0, 1] and out.column("added").null_count == 2
    with pytest.raises(SchemaError, match=r"f\.log.*'name'"):
        decode(block, "f.log", pa.schema([("name", pa.int64())]))


def test_encoders_add_meta_fields_and_reject_unknown_columns() -> None:
    data = pa.table({"id": pa.array([1], pa.int64())})
    (block,) = read_blocks(encode_avro_data_block(data, arrow_to_avro(data.schema, "t"), T1), "f.log")
    out = decode_avro_data_block(block, "f.log")
    assert out.column_names == [*META_COLUMNS, "id"] and out.column("_hoodie_record_key").null_count == 1
    with pytest.raises(SchemaError, match="extra"):
        extra = data.append_column("extra", pa.array([1]))
        encode_avro_data_block(extra, arrow_to_avro(data.schema, "t"), T1)


def _reframe(block_bytes: bytes, content: bytes) -> bytes:
    (block,) = read_blocks(block_bytes, "f.log")
    return encode_block(block.block_type, block.header, content)  # type: ignore[arg-type]


@pytest.mark.parametrize("decode,make", [
    (decode_avro_data_block, lambda: encode_avro_data_block(_sample_table(2), arrow_to_avro(
        _sample_table(2).schema, "t"), T1)),
    (decode_delete_block, lambda: encode_delete_block(["a"], ["p"], [1], "long", T1)),
])
def test_bad_content_raises_corrupt_table_error_naming_the_file(decode: Callable[..., Any],
                                                                make: Callable[[], bytes]) -> None:
    good = make()
    (block,) = read_blocks(good, "f.log")
    content = bytes(block.content)
    for bad in (content[:-3], content[:6], content[:8] + b"\xff" * (len(content) - 8),
                struct.pack(">i", 7) + content[4:]):
        with pytest.raises(CorruptTableError, match=r"my/file\.log"):
            decode(read_blocks(_reframe(good, bad), "f.log")[0], "my/file.log")
    with pytest.raises(UnsupportedTableError, match="legacy"):
        decode(read_blocks(_reframe(good, struct.pack(">i", 2) + content[4:]), "f.log")[0], "my/file.log")
    with pytest.raises(HudiDsError, match="expected"):
        decode(read_blocks(encode_rollback_block(T2, T1), "f.log")[0], "f.log")


def test_avro_block_without_schema_header_is_corrupt() -> None:
    (block,) = read_blocks(encode_block(BlockType.AVRO_DATA, {HeaderKey.INSTANT_TIME: T1}, bytes(8)), "f.log")
    with pytest.raises(CorruptTableError, match="SCHEMA"):
        decode_avro_data_block(block, "f.log")


# ------------------------------------------------------------------------------------------ delete blocks

_ORDERING: dict[str | None, st.SearchStrategy[Any]] = {
    "int": st.integers(-(2**31), 2**31 - 1), "long": st.integers(-(2**63), 2**63 - 1),
    "float": st.floats(width=32, allow_nan=False), "double": st.floats(allow_nan=False),
    "string": st.text(), "bytes": st.binary(), None: st.none(),
}
_BRANCH = {None: "int", "int": "int", "long": "long", "float": "float", "double": "double",
           "string": "string", "bytes": "bytes"}


@SETTINGS
@given(st.sampled_from(list(_ORDERING)), st.data())
def test_delete_block_round_trip(ordering_type: str | None, data: Any) -> None:
    n = data.draw(st.integers(0, 20))
    keys = data.draw(st.lists(st.text(), min_size=n, max_size=n))
    parts = data.draw(st.lists(st.none() | st.text(max_size=10), min_size=n, max_size=n))
    nullable = ordering_type not in ("string", "bytes")
    value = (st.none() | _ORDERING[ordering_type]) if nullable else _ORDERING[ordering_type]
    values = data.draw(st.lists(value, min_size=n, max_size=n))
    (block,) = read_blocks(encode_delete_block(keys, parts, values, ordering_type, T1), "f.log")
    assert block.block_type == BlockType.DELETE and block.header == {HeaderKey.INSTANT_TIME: T1}
    deletes = decode_delete_block(block, "f.log")
    assert deletes.record_keys.to_pylist() == keys and deletes.partition_paths.to_pylist() == parts
    zero = {"float": 0.0, "double": 0.0}.get(ordering_type or "", 0)
    expected = [zero if v is None else v for v in values]
    if ordering_type == "float":
        expected = [struct.unpack("<f", struct.pack("<f", v))[0] for v in expected]
    assert deletes.ordering_values.to_pylist() == expected
    assert deletes.natural.tolist() == [ordering_type in (None, "int", "long") and v == 0 for v in expected]
    # the branch written is the one of the ordering type (hudi-rs ignores deletes with another branch)
    raw = bytes(block.content)[8:]
    branches = _union_branches(raw)
    assert branches == [_ORDERING_UNION_NAMES.index(_BRANCH[ordering_type])] * n
    # one branch per block: the fast decoder (polars) takes it, and the reference decoder agrees
    fast = blocks_module._delete_records_polars(raw)
    assert (fast is not None) == (n > 0)
    reference = blocks_module._delete_records_fastavro(raw, "f.log", block)
    assert reference.record_keys.to_pylist() == keys and reference.ordering_values.to_pylist() == expected
    # the scanner (hudi_ds.log.delete_scan) reads the null and integer branches, and agrees
    scanned = blocks_module._delete_records_scanned(raw)
    assert (scanned is not None) == (n == 0 or ordering_type in (None, "int", "long"))
    if scanned is not None:
        assert scanned.record_keys.equals(reference.record_keys)
        assert scanned.partition_paths.equals(reference.partition_paths)
        assert scanned.ordering_values.to_pylist() == expected and scanned.natural.tolist() == deletes.natural.tolist()


@SETTINGS
@given(st.sampled_from([None, "int", "long"]), st.data())
def test_delete_scan_of_damaged_lists_agrees_or_declines(ordering_type: str | None, data: Any) -> None:
    """A delete list with one byte changed and cut short somewhere: the scanner reads it as fastavro does, or
    declines (None) and leaves naming the damage to fastavro; it never raises."""
    n = data.draw(st.integers(1, 6))
    keys = data.draw(st.lists(st.text(max_size=4), min_size=n, max_size=n))
    parts = data.draw(st.lists(st.none() | st.text(max_size=4), min_size=n, max_size=n))
    values = data.draw(st.lists(st.none() | _ORDERING[ordering_type or "int"], min_size=n, max_size=n))
    (block,) = read_blocks(encode_delete_block(keys, parts, values, ordering_type, T1), "f.log")
    raw = bytes(block.content)[8:]
    at = data.draw(st.integers(0, len(raw) - 1))
    damaged = (raw[:at] + bytes([data.draw(st.integers(0, 255))]) + raw[at + 1:])[:data.draw(st.integers(0, len(raw)))]
    scanned = blocks_module._delete_records_scanned(damaged)
    try:
        reference = blocks_module._delete_records_fastavro(damaged, "f.log", block)
    except CorruptTableError:
        reference = None
    if scanned is not None:
        assert reference is not None
        assert scanned.record_keys.to_pylist() == reference.record_keys.to_pylist()
        assert scanned.partition_paths.to_pylist() == reference.partition_paths.to_pylist()
        assert scanned.ordering_values.to_pylist() == reference.ordering_values.to_pylist()


def test_delete_block_with_several_ordering_branches() -> None:
    """Another writer may mix union branches in one block: the reference decoder reads it, and an int 0 or
    a null still marks a natural delete."""
    items = [{"recordKey": "a", "partitionPath": "p", "orderingVal": 0},
             {"recordKey": "b", "partitionPath": None, "orderingVal": "x"},
             {"recordKey": "c", "partitionPath": "p", "orderingVal": None},
             {"recordKey": "d", "partitionPath": "p", "orderingVal": 7}]
    bio = io.BytesIO()
    fastavro.schemaless_writer(bio, fastavro.parse_schema(DELETE_RECORD_LIST_SCHEMA), {"deleteRecordList": items})
    payload = bio.getvalue()
    content = struct.pack(">ii", CONTENT_VERSION, len(payload)) + payload
    (block,) = read_blocks(encode_block(BlockType.DELETE, {HeaderKey.INSTANT_TIME: T1}, content), "f.log")
    assert blocks_module._delete_records_polars(payload) is None
    deletes = decode_delete_block(block, "f.log")
    assert deletes.record_keys.to_pylist() == ["a", "b", "c", "d"]
    assert deletes.partition_paths.to_pylist() == ["p", None, "p", "p"]
    assert deletes.natural.tolist() == [True, False, True, False]
    assert deletes.ordering_values.to_pylist() == ["0", "x", None, "7"]


_ORDERING_UNION_NAMES = ["null", "int", "long", "float", "double", "bytes", "string"]


def _union_branches(raw: bytes) -> list[int]:
    """orderingVal branch indexes, read with fastavro's low-level union info (return_record_name off)."""
    schema = json.loads(json.dumps(DELETE_RECORD_LIST_SCHEMA))
    union = schema["fields"][0]["type"]["items"]["fields"][2]["type"]
    # decode each branch as a one-field record whose value tells the branch
    tagged = [
        "null" if b == "null" else {"type": "record", "name": f"B{i}", "fields": [{"name": "v", "type": b}]}
        for i, b in enumerate(union)
    ]
    schema["fields"][0]["type"]["items"]["fields"][2]["type"] = tagged
    decoded = fastavro.schemaless_reader(io.BytesIO(raw), fastavro.parse_schema(schema), None,
                                         return_record_name=True)
    out = []
    for rec in decoded["deleteRecordList"]:  # type: ignore[index,call-overload]
        assert isinstance(rec, dict)
        value = rec["orderingVal"]
        out.append(0 if value is None else int(value[0].rsplit(".", 1)[-1][1:]))
    return out


def test_delete_encoding_validates() -> None:
    """Validation of delete blocks (their speed is measured in benchmarks/, never timed in a unit test)."""
    keys = [f"key-{i}" for i in range(20_000)]
    encode_delete_block(keys, ["city=sf"] * len(keys), list(range(len(keys))), "long", T1)
    with pytest.raises(HudiDsError, match="int32"):
        encode_delete_block(["a"], ["p"], [2**40], "int", T1)
    with pytest.raises(HudiDsError, match="null"):
        encode_delete_block(["a"], ["p"], [None], "string", T1)
    with pytest.raises(HudiDsError, match="same length"):
        encode_delete_block(["a", "b"], ["p"], [1, 2], "long", T1)
    with pytest.raises(SchemaError, match="boolean"):
        encode_delete_block(["a"], ["p"], [True], "boolean", T1)


# ------------------------------------------------------------------------------------------ reference tables


def _log_files(reference_dir: Path) -> list[Path]:
    return sorted(Path(root) / name for root, _, files in os.walk(reference_dir) for name in files
                  if name.startswith(".") and ".log." in name)


def _catalog(reference_dir: Path) -> dict[str, list[tuple[str, str, int | None]]]:
    """`<table>/<log path>` -> [(block type, instant, record count)] as listed in CATALOG.md."""
    out: dict[str, list[tuple[str, str, int | None]]] = {}
    table = ""
    for line in (reference_dir / "CATALOG.md").read_text().splitlines():
        if line.startswith("### "):
            table = line[4:].strip()
        m = re.match(r"- log `([^`]+)`: (.+)$", line)
        if m:
            entries = []
            for part in m.group(2).split(", "):
                em = re.match(r"(\w+)@(\d+)(?: n=(\d+))?", part.strip())
                assert em, part
                entries.append((em.group(1), em.group(2), int(em.group(3)) if em.group(3) else None))
            out[f"{table}/{m.group(1)}"] = entries
    return out


def test_reference_log_files_match_catalog(reference_dir: Path) -> None:
    catalog = _catalog(reference_dir)
    assert len(catalog) >= 15
    seen = set()
    for path in _log_files(reference_dir):
        rel = path.relative_to(reference_dir).as_posix()
        blocks = read_blocks(path.read_bytes(), str(path))
        assert blocks and all(b.block_type != BlockType.CORRUPT for b in blocks), rel
        assert sum(b.size for b in blocks) == path.stat().st_size
        for block in blocks:
            assert block.instant_time and re.fullmatch(r"\d{17}", block.instant_time), rel
            if block.block_type == BlockType.DELETE:
                decode_delete_block(block, str(path))
            elif block.block_type == BlockType.AVRO_DATA:
                assert decode_avro_data_block(block, str(path)).column_names[:5] == META_COLUMNS
            elif block.block_type == BlockType.PARQUET_DATA:
                assert decode_parquet_data_block(block, str(path)).column_names[:5] == META_COLUMNS
            else:
                assert block.block_type == BlockType.HFILE_DATA and "/.hoodie/metadata/" in rel
        if rel in catalog:
            seen.add(rel)
            got = []
            for block in blocks:
                n = None
                if block.block_type == BlockType.AVRO_DATA:
                    n = decode_avro_data_block(block, str(path)).num_rows
                got.append((block.block_type.name, block.instant_time, n))
            assert got == catalog[rel], rel
    assert seen == set(catalog)


def test_reference_avro_blocks_decode_alike_through_polars_and_fastavro(reference_dir: Path) -> None:
    """Apache Hudi's own Avro data and delete blocks read the same through polars' reader and through fastavro."""
    import polars  # noqa: F401  (loaded, so every block takes polars' reader when it can read its schema)

    by_polars = 0
    for path in _log_files(reference_dir):
        for block in read_blocks(path.read_bytes(), str(path)):
            if block.block_type == BlockType.AVRO_DATA:
                count, body = blocks_module._record_bytes(block, str(path))
                _, array_schema, natural = blocks_module._avro_codec(block.schema_json or "")
                reference = blocks_module._decode_fastavro(array_schema, count, body, natural, block, str(path))
                assert decode_avro_data_block(block, str(path)).equals(reference), path
                by_polars += polars_avro.polars_schema(block.schema_json or "") is not None
            elif block.block_type == BlockType.DELETE:
                (length,) = struct.unpack_from(">i", block.content, 4)
                raw = bytes(block.content[8:8 + length])
                fast = blocks_module._delete_records_polars(raw)  # None: a list polars cannot read (fastavro's)
                slow = blocks_module._delete_records_fastavro(raw, str(path), block)
                if fast is None:
                    continue
                assert fast.record_keys.equals(slow.record_keys), path
                assert fast.partition_paths.equals(slow.partition_paths), path
                assert fast.ordering_values.to_pylist() == slow.ordering_values.to_pylist(), path
                by_polars += 1
    assert by_polars >= 5


def _rider_by_key(table_dir: Path) -> dict[str, str]:
    riders: dict[str, str] = {}
    for base in table_dir.glob("*/*.parquet"):
        t = pq.read_table(base, columns=["uuid", "rider"])
        riders.update(zip(t.column("uuid").to_pylist(), t.column("rider").to_pylist(), strict=True))
    return riders


def test_reference_delete_and_update_contents(reference_dir: Path) -> None:
    d_table = reference_dir / "quickstart_mor_avro_v6_trips_8i3d"
    (log,) = d_table.glob("city=san_francisco/.*.log.*")
    (block,) = read_blocks(log.read_bytes(), str(log))
    assert block.size == 1098 and block.instant_time == "20250618054714114"  # blockLen 1084 per the spec
    deletes = decode_delete_block(block, str(log))
    riders = _rider_by_key(d_table)
    assert sorted(riders[k] for k in deletes.record_keys.to_pylist()) == ["rider-A", "rider-C", "rider-D"]
    assert deletes.partition_paths.to_pylist() == ["city=san_francisco"] * 3
    assert deletes.ordering_values.to_pylist() == [0, 0, 0] and deletes.natural.tolist() == [True] * 3
    # our encoder reproduces Spark's delete content byte for byte (long 0 for the long `ts` field)
    ours = read_blocks(encode_delete_block(deletes.record_keys.to_pylist(), ["city=san_francisco"] * 3, [0] * 3, "long",
                                           block.instant_time or ""), "x")[0]
    assert bytes(ours.content) == bytes(block.content)

    u_table = reference_dir / "quickstart_mor_avro_v6_trips_8i1u"
    (log,) = u_table.glob("city=san_francisco/.*.log.*")
    (block,) = read_blocks(log.read_bytes(), str(log))
    rows = decode_avro_data_block(block, str(log)).to_pylist()
    assert len(rows) == 1 and rows[0]["fare"] == 25.0 and rows[0]["rider"] == "rider-D"
    assert rows[0]["_hoodie_commit_time"] == "20250331030645735"

    v9 = reference_dir / "mor_avro_v9_txns_simple_meta"
    (log,) = v9.glob("region=apac/.*.log.*")
    (block,) = read_blocks(log.read_bytes(), str(log))
    row = decode_avro_data_block(block, str(log)).to_pylist()[0]
    assert (row["txn_id"], row["fee_amount"]) == ("TXN-007", decimal.Decimal("75.00"))
    assert row["txn_datetime"] == dt.datetime(2024, 1, 16, 8, 15, tzinfo=dt.timezone.utc)


def test_reference_parquet_block_nested_types(reference_dir: Path) -> None:
    table = reference_dir / "mor_parquet_v6_nonpartitioned"
    (log,) = table.glob(".*.log.*")
    (block,) = read_blocks(log.read_bytes(), str(log))
    out = decode_parquet_data_block(block, str(log))
    assert out.schema.equals(avro_to_arrow(block.schema_json or ""))
    row = out.to_pylist()[0]
    assert (row["id"], row["name"], row["isActive"]) == (1, "Alice", False)
    assert row["arrayField"][0] == {"arr_struct_f1": "red", "arr_struct_f2": 100}
    assert row["mapField"][0][0] == "key1" and row["decimalField"] == decimal.Decimal("12345.67890")


# ------------------------------------------------------------------------------------------ hudi-rs interop


def _write_v6_mor_table(base: Path, kind: str) -> None:
    """A minimal v6 MOR table written by hand (spec §1.3, §1.5, §2.4, §9): one base file, then one log file
    holding our data block (a higher-ts update of k1, a lower-ts update of k2) and our delete block (k3)."""
    (base / ".hoodie").mkdir(parents=True)
    props = {
        "hoodie.table.name": "trips", "hoodie.table.type": "MERGE_ON_READ", "hoodie.table.version": "6",
        "hoodie.timeline.layout.version": "1", "hoodie.table.recordkey.fields": "uuid",
        "hoodie.table.precombine.field": "ts", "hoodie.table.partition.fields": "city",
        "hoodie.table.keygenerator.class": "org.apache.hudi.keygen.SimpleKeyGenerator",
        "hoodie.table.base.file.format": "PARQUET", "hoodie.datasource.write.hive_style_partitioning": "true",
        "hoodie.datasource.write.partitionpath.urlencode": "false",
        "hoodie.datasource.write.drop.partition.columns": "false", "hoodie.populate.meta.fields": "true",
        "hoodie.compaction.payload.class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
        "hoodie.table.timeline.timezone": "UTC", "hoodie.database.name": "default",
        "hoodie.archivelog.folder": "archived", "hoodie.table.checksum": str(zlib.crc32(b"default.trips")),
    }
    (base / ".hoodie" / "hoodie.properties").write_text(
        "#Properties saved\n" + "".join(f"{k}={v}\n" for k, v in props.items()))
    data_schema = pa.schema([("ts", pa.int64()), ("uuid", pa.string()), ("rider", pa.string()),
                             ("fare", pa.float64()), ("city", pa.string())])
    full_schema = with_meta(data_schema)
    part, file_id, token = "city=sf", "5f7c1f59-2d8e-4a6b-9a39-0c1d2e3f4a5b-0", "0-1-0"
    (base / part).mkdir()
    (base / part / ".hoodie_partition_metadata").write_text(
        f"#partition metadata\ncommitTime={T1}\npartitionDepth=1\n")
    base_name = f"{file_id}_{token}_{T1}.parquet"
    keys = ["k1", "k2", "k3", "k4"]
    rows = pa.table({
        "_hoodie_commit_time": [T1] * 4, "_hoodie_commit_seqno": [f"{T1}_0_{i}" for i in range(4)],
        "_hoodie_record_key": keys, "_hoodie_partition_path": [part] * 4,
        "_hoodie_file_name": [base_name] * 4,
        "ts": [100] * 4, "uuid": keys, "rider": ["A", "B", "C", "D"], "fare": [1.0, 2.0, 3.0, 4.0],
        "city": ["sf"] * 4}, schema=full_schema)
    pq.write_table(rows, base / part / base_name, store_schema=False)

    def commit(instant: str, stat: dict[str, Any]) -> None:
        meta = {"partitionToWriteStats": {part: [stat]}, "compacted": False, "operationType": "UPSERT",
                "extraMetadata": {"schema": json.dumps(arrow_to_avro(data_schema, "trips"))}}
        (base / ".hoodie" / f"{instant}.deltacommit.requested").write_bytes(b"")
        (base / ".hoodie" / f"{instant}.deltacommit.inflight").write_text(
            json.dumps({**meta, "partitionToWriteStats": {}}))
        (base / ".hoodie" / f"{instant}.deltacommit").write_text(json.dumps(meta, indent=2))

    size = (base / part / base_name).stat().st_size
    commit(T1, {"fileId": file_id, "path": f"{part}/{base_name}", "prevCommit": "null", "numWrites": 4,
                "numDeletes": 0, "numUpdateWrites": 0, "numInserts": 4, "totalWriteBytes": size,
                "totalWriteErrors": 0, "partitionPath": part, "fileSizeInBytes": size})
    updates = pa.table({
        "_hoodie_commit_time": [T2] * 2, "_hoodie_commit_seqno": [f"{T2}_0_{i}" for i in range(2)],
        "_hoodie_record_key": ["k1", "k2"], "_hoodie_partition_path": [part] * 2,
        "_hoodie_file_name": [file_id] * 2,
        "ts": [200, 50], "uuid": ["k1", "k2"], "rider": ["A", "B"], "fare": [99.0, 77.0], "city": ["sf"] * 2})
    encode = encode_avro_data_block if kind == "avro" else encode_parquet_data_block
    log = (encode(updates, arrow_to_avro(full_schema, "trips"), T2)
           + encode_delete_block(["k3"], [part], [0], "long", T2))
    log_name = f".{file_id}_{T1}.log.1_{token}"
    (base / part / log_name).write_bytes(log)
    commit(T2, {"fileId": file_id, "path": f"{part}/{log_name}", "prevCommit": T1, "numWrites": 2,
                "numDeletes": 1, "numUpdateWrites": 2, "numInserts": 0, "totalWriteBytes": len(log),
                "totalWriteErrors": 0, "partitionPath": part, "fileSizeInBytes": len(log), "logVersion": 1,
                "logOffset": 0, "baseFile": base_name, "logFiles": [log_name]})


@pytest.mark.interop
@pytest.mark.parametrize("kind", ["avro", "parquet"])
def test_hudi_rs_reads_our_log_blocks(tmp_path: Path, kind: str) -> None:
    from hudi import HudiTableBuilder

    _write_v6_mor_table(tmp_path / "t", kind)
    table = HudiTableBuilder.from_base_uri(str(tmp_path / "t")).build()
    read = getattr(table, "read_snapshot", None) or table.read  # hudi 0.5.0 names it read()
    result = pa.Table.from_batches(read())
    rows = sorted(result.select(["uuid", "ts", "fare"]).to_pylist(), key=lambda r: r["uuid"])
    assert rows == [
        {"uuid": "k1", "ts": 200, "fare": 99.0},  # update with a higher ordering value applied
        {"uuid": "k2", "ts": 100, "fare": 2.0},  # update with a lower ordering value ignored
        {"uuid": "k4", "ts": 100, "fare": 4.0},  # untouched; k3 deleted by our delete block
    ]
