"""The HFile codec (hudi_ds.hfile) and the HFile log block: property round trips across block sizes and codecs,
point lookups and scans, damage handling, Java-compatible details, and every HFile of the reference tables'
metadata tables (base files and log blocks), which Hudi 1.0 (HBase's writer) and Hudi 1.1 (Hudi's) wrote."""

from __future__ import annotations

import dataclasses
import glob
import io
import json
import shutil
import struct
from pathlib import Path

import fastavro
import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, example, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds.errors import CorruptTableError, HudiDsError, InvalidDataError, UnsupportedTableError
from hudi_ds.hfile import (
    AvroHFileReader,
    BloomFilter,
    Compression,
    HFileReader,
    HFileWriter,
    write_avro_hfile,
)
from hudi_ds.hfile.bloom import FilterBits, KeyPositions
from hudi_ds.hfile.java_order import hash_map_order, java_string_hash
from hudi_ds.hfile.keyvalue import KEY_REST, decode_entries, encode_entries
from hudi_ds.hfile.varint import decode_hadoop_vint, decode_uvarint, encode_hadoop_vint, encode_uvarint
from hudi_ds.log import BlockType, HeaderKey, read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block, encode_hfile_data_block
from hudi_ds.metadata.avro_schema import metadata_schema_json
from hudi_ds.metadata.records import file_list_record

SETTINGS = settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
META_TABLES = ["cow_v9_timebasedkeygen_epochmillis", "cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta",
               "mor_avro_v9_txns_simple_overwrite", "quickstart_mor_avro_v8_trips_8i3u1d"]


def _hfile(entries: list[tuple[bytes, bytes]], block_size: int = 4096, compression: Compression = Compression.GZ,
           created_ms: int = 1) -> bytes:
    writer = HFileWriter(block_size=block_size, compression=compression, created_ms=created_ms)
    for key, value in entries:
        writer.append(key, value)
    return writer.finish()


# ------------------------------------------------------------------------------------------------ varints


@given(st.integers(min_value=-(2**63), max_value=2**63 - 1))
def test_hadoop_vint_round_trips(value):
    encoded = encode_hadoop_vint(value)
    assert decode_hadoop_vint(encoded + b"\xff", 0, "t") == (value, len(encoded))


@given(st.integers(min_value=0, max_value=2**64 - 1))
def test_protobuf_varint_round_trips(value):
    encoded = encode_uvarint(value)
    assert decode_uvarint(encoded + b"\x01", 0, "t") == (value, len(encoded))


def test_the_two_varints_agree_below_128_and_differ_above():
    # WritableUtils.writeVInt and CodedOutputStream.writeUInt32NoTag, worked by hand from their definitions
    assert encode_hadoop_vint(127) == encode_uvarint(127) == b"\x7f"
    assert encode_hadoop_vint(128) == b"\x8f\x80"
    assert encode_uvarint(128) == b"\x80\x01"
    assert encode_hadoop_vint(-113) == b"\x87\x70"
    assert encode_uvarint(2**64 - 1) == b"\xff" * 9 + b"\x01"  # Java's -1L as written into the trailer


def test_truncated_varints_are_corruption():
    with pytest.raises(CorruptTableError):
        decode_uvarint(b"\x80\x80", 0, "t")
    with pytest.raises(CorruptTableError):
        decode_hadoop_vint(b"\x8e\x01", 0, "t")


# ------------------------------------------------------------------------------------------ Java details


def test_java_string_hash_matches_java():
    # String.hashCode values documented for these strings; "Aa" and "BB" are Java's classic collision
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("Aa") == java_string_hash("BB") == 2112
    assert java_string_hash("polygenelubricants") == -(2**31)


def test_hash_map_order_keeps_insertion_order_within_a_bucket():
    assert hash_map_order(["BB", "Aa"]) == ["BB", "Aa"]
    assert hash_map_order(["Aa", "BB"]) == ["Aa", "BB"]
    many = [f"k{i}" for i in range(40)]  # past two resizes (16 -> 32 -> 64 buckets)
    assert sorted(hash_map_order(many)) == sorted(many)


# --------------------------------------------------------------------------------------------- round trips

keys = st.lists(st.binary(max_size=40), unique=True, max_size=120).map(sorted)
block_sizes = st.sampled_from([1, 64, 700, 4096, 1024 * 1024])
codecs = st.sampled_from([Compression.GZ, Compression.NONE])


@SETTINGS
@given(keys, st.data(), block_sizes, codecs)
def test_any_sorted_unique_entries_round_trip(sorted_keys, data, block_size, codec):
    entries = [(k, data.draw(st.binary(max_size=300))) for k in sorted_keys]
    raw = _hfile(entries, block_size, codec)
    for source in (raw, pa.BufferReader(raw)):
        reader = HFileReader(source, "mem.hfile")
        assert list(reader) == entries
        assert reader.entry_count == len(entries)
        assert reader.compression is codec
        assert reader.last_key == (entries[-1][0] if entries else None)
    if block_size == 1 and entries:
        assert len(reader.index) == len(entries)  # every entry passes the block size: one block each


@SETTINGS
@given(keys, st.lists(st.binary(max_size=40), max_size=30), block_sizes)
def test_point_lookups_of_present_and_absent_keys(sorted_keys, probes, block_size):
    entries = [(k, b"v" + k) for k in sorted_keys]
    reader = HFileReader(_hfile(entries, block_size), "mem.hfile")
    stored = dict(entries)
    for key in sorted_keys + probes:
        assert reader.get(key) == stored.get(key)
    assert reader.get_many(probes + sorted_keys[:5]) == {k: stored[k] for k in probes + sorted_keys[:5] if k in stored}


_FAKE_ENTRY = struct.pack(">iih", 12, 0, 0) + KEY_REST  # a value may hold what looks like a whole entry
_PIECES = st.sampled_from([b"", b"a", b"\x00", KEY_REST, KEY_REST[:5], _FAKE_ENTRY, b"\x00\x00\x00\x16", b"xyz" * 9])


@SETTINGS
@given(st.lists(st.tuples(st.lists(_PIECES, max_size=4).map(b"".join), st.lists(_PIECES, max_size=4).map(b"".join)),
                max_size=60))
@example([(b"", b"a" + _FAKE_ENTRY + b"\x00"), (b"k", b"")])
@example([(b"", b"a" + _FAKE_ENTRY), (b"k", b"")])
def test_data_block_entries_decode_to_what_was_encoded(entries):
    """Entries are found column-wise from the KEY_REST ending each key when they chain from the block's start
    to its end, else by walking: either way the columns given, whatever the keys and values hold (KEY_REST's
    bytes, lengths that look like entry headers) and however many distinct key lengths a block has."""
    keys_in = pa.array([k for k, _ in entries], pa.binary())
    values_in = pa.array([v for _, v in entries], pa.binary())
    keys_out, values_out = decode_entries(encode_entries(keys_in, values_in), "mem")
    assert keys_out.equals(keys_in) and values_out.equals(values_in)


@SETTINGS
@given(keys, st.lists(st.binary(max_size=40), max_size=30), st.data(), block_sizes)
def test_column_selections_of_present_and_absent_keys(sorted_keys, probes, data, block_size):
    """select_columns gives the entries of the keys asked for in key order, whether it reads only the blocks
    that may hold them (fewer keys than blocks) or every block, and every entry when asked for none."""
    entries = [(k, data.draw(st.binary(max_size=60))) for k in sorted_keys]
    reader = HFileReader(_hfile(entries, block_size), "mem.hfile")
    wanted = probes + data.draw(st.lists(st.sampled_from(sorted_keys), max_size=10) if sorted_keys else st.just([]))
    keys_found, values_found = reader.select_columns(pa.array(wanted, pa.binary()))
    assert list(zip(keys_found.to_pylist(), values_found.to_pylist(), strict=True)) == \
        [(k, v) for k, v in entries if k in set(wanted)]
    everything = reader.select_columns()
    assert list(zip(*(c.to_pylist() for c in everything), strict=True)) == entries


@SETTINGS
@given(keys, st.binary(max_size=3), st.binary(max_size=3) | st.none(), block_sizes)
def test_range_and_prefix_scans(sorted_keys, start, stop, block_size):
    entries = [(k, k[::-1]) for k in sorted_keys]
    reader = HFileReader(_hfile(entries, block_size), "mem.hfile")
    assert list(reader.scan(start, stop)) == [(k, v) for k, v in entries if k >= start and (stop is None or k < stop)]
    assert list(reader.scan_prefix(start)) == [(k, v) for k, v in entries if k.startswith(start)]


@SETTINGS
@given(st.dictionaries(st.text(min_size=1, max_size=20), st.binary(max_size=100), max_size=8),
       st.dictionaries(st.text(min_size=1, max_size=20), st.binary(max_size=2000), max_size=3))
def test_file_info_and_meta_blocks_round_trip(info, meta):
    writer = HFileWriter(created_ms=1_700_000_000_123)
    writer.append(b"k", b"v")
    for name, value in info.items():
        writer.add_file_info(name, value)
    for name, value in meta.items():
        writer.add_meta_block(name, value)
    reader = HFileReader(writer.finish(), "mem.hfile")
    for name, value in info.items():
        if not name.startswith("hfile.") and name not in ("KEY_VALUE_VERSION", "MAX_MEMSTORE_TS_KEY"):
            assert reader.file_info[name.encode()] == value
    for name, value in meta.items():
        assert reader.meta_block(name.encode()) == value
    assert reader.meta_block(b"absent") is None
    assert struct.unpack(">q", reader.file_info[b"hfile.CREATE_TIME_TS"])[0] == 1_700_000_000_123


def test_empty_file_has_no_entries_and_no_last_key():
    reader = HFileReader(_hfile([]), "empty.hfile")
    assert list(reader) == [] and reader.last_key is None and reader.get(b"a") is None
    assert reader.trailer.first_data_block_offset == -1


def test_long_keys_carry_hadoop_vint_lengths_in_the_index():
    entries = [(bytes([65 + i]) * 300, b"v") for i in range(5)]  # index keys of 302 bytes: a 3-byte VInt
    reader = HFileReader(_hfile(entries, block_size=1), "long.hfile")
    assert list(reader) == entries and [e.key for e in reader.index] == [k for k, _ in entries]


def test_blocks_are_cut_at_the_block_size():
    entries = [(b"%06d" % i, b"x" * 100) for i in range(100)]  # 127 bytes per entry
    reader = HFileReader(_hfile(entries, block_size=1000), "cut.hfile")
    assert len(reader.index) == 15  # 7 entries (889 bytes) fill a block; an eighth would pass 1000


# ---------------------------------------------------------------------------------------------- bad input


def test_writer_refuses_unsorted_or_repeated_keys_and_bad_settings():
    writer = HFileWriter()
    writer.append(b"b", b"")
    for key in (b"a", b"b"):
        with pytest.raises(InvalidDataError, match="unique and ascending"):
            writer.append(key, b"")
    with pytest.raises(InvalidDataError, match="longer than"):
        writer.append(b"c" * 40000, b"")
    with pytest.raises(InvalidDataError, match="positive"):
        HFileWriter(block_size=0)
    with pytest.raises(InvalidDataError, match="GZ or NONE"):
        HFileWriter(compression=Compression.SNAPPY)


@SETTINGS
@given(keys, st.data(), block_sizes, codecs)
def test_appending_columns_writes_the_bytes_of_appending_one_by_one(sorted_keys, data, block_size, codec):
    """Entries added as columns (in runs, mixed with single appends) give the very bytes of one append each."""
    entries = [(k, data.draw(st.binary(max_size=300))) for k in sorted_keys]
    cuts = sorted(data.draw(st.lists(st.integers(min_value=0, max_value=len(entries)), max_size=4)))
    writer = HFileWriter(block_size=block_size, compression=codec, created_ms=1)
    for i, (start, stop) in enumerate(zip([0, *cuts], [*cuts, len(entries)], strict=True)):
        run = entries[start:stop]
        if i % 2 and len(run) == 1:
            writer.append(*run[0])
        else:
            writer.append_all(pa.array([k for k, _ in run], pa.binary()), pa.array([v for _, v in run], pa.binary()))
    assert writer.finish() == _hfile(entries, block_size, codec)


def test_appending_columns_refuses_what_appending_refuses():
    writer = HFileWriter()
    writer.append(b"b", b"")
    for column in ([b"a"], [b"b"], [b"c", b"c"], [b"e", b"d"]):
        with pytest.raises(InvalidDataError, match="unique and ascending"):
            writer.append_all(pa.array(column, pa.binary()), pa.array([b""] * len(column), pa.binary()))
    with pytest.raises(InvalidDataError, match="longer than"):
        writer.append_all(pa.array([b"c" * 40000], pa.binary()), pa.array([b""], pa.binary()))
    with pytest.raises(InvalidDataError, match="non-null"):
        writer.append_all(pa.array([b"c"], pa.binary()), pa.array([None], pa.binary()))


def _read_all(raw: bytes) -> list[tuple[bytes, bytes]]:
    reader = HFileReader(raw, "damaged.hfile")
    return list(reader)


FUZZ_ENTRIES = [(b"key%04d" % i, bytes([i % 256]) * (i % 37)) for i in range(120)]
FUZZ_FILE = _hfile(FUZZ_ENTRIES, block_size=300)


@settings(max_examples=150, deadline=None)
@given(st.integers(min_value=0, max_value=len(FUZZ_FILE) - 1), st.integers(min_value=1, max_value=255))
def test_a_damaged_byte_never_yields_wrong_entries(position, flip):
    """GZ blocks carry a CRC and every offset is checked, so damage anywhere either raises a HudiDsError or
    touches nothing the entries depend on (padding, checksum space, unused header fields)."""
    damaged = bytearray(FUZZ_FILE)
    damaged[position] ^= flip
    try:
        entries = _read_all(bytes(damaged))
    except HudiDsError:
        return
    assert entries == FUZZ_ENTRIES


@settings(max_examples=60, deadline=None)
@given(st.integers(min_value=0, max_value=len(FUZZ_FILE) - 1))
def test_a_truncated_file_is_corrupt(length):
    with pytest.raises(CorruptTableError, match="damaged.hfile"):
        _read_all(FUZZ_FILE[:length])


def test_unsupported_codec_and_version_are_named():
    raw = bytearray(_hfile([(b"k", b"v")]))
    trailer = len(raw) - 4096
    codec_field = raw.index(b"\x60\x01", trailer)  # field 12 (compression codec) = GZ
    raw[codec_field + 1] = 3  # SNAPPY
    with pytest.raises(UnsupportedTableError, match="SNAPPY"):
        HFileReader(bytes(raw), "snappy.hfile")
    raw = bytearray(_hfile([(b"k", b"v")]))
    raw[-1] = 2
    with pytest.raises(UnsupportedTableError, match="version 2"):
        HFileReader(bytes(raw), "v2.hfile")
    with pytest.raises(CorruptTableError, match="not an HFile"):
        HFileReader(b"\x00" * 5000, "zeros.hfile")


# ------------------------------------------------------------------------------------------- bloom filter


@SETTINGS
@given(st.lists(st.binary(min_size=1, max_size=30), max_size=60), st.integers(min_value=1, max_value=20))
def test_bloom_filter_holds_every_key_and_round_trips(bloom_keys, per_row):
    bloom = BloomFilter(per_row, 0.01, per_row * 3)
    bloom.add_all(bloom_keys)
    assert all(bloom.might_contain(k) for k in bloom_keys)
    assert len(bloom.rows) == min(3, max(1, -(-len(bloom_keys) // per_row)))
    again = BloomFilter.deserialize(bloom.serialize(), "t")
    assert again.serialize() == bloom.serialize()
    assert all(again.might_contain(k) for k in bloom_keys)


@SETTINGS
@given(st.lists(st.text(min_size=1, max_size=12), max_size=80), st.integers(min_value=0, max_value=3),
       st.integers(min_value=1, max_value=20))
def test_bloom_filter_of_arrow_strings_equals_the_filter_of_their_bytes(keys, skip, per_row):
    # add_strings reads Arrow's buffers (a sliced array starts at an offset); add_all takes the bytes one by one
    from_arrow, from_bytes = BloomFilter(per_row, 0.01, per_row * 3), BloomFilter(per_row, 0.01, per_row * 3)
    from_arrow.add_strings(pa.chunked_array([pa.array(["x"] * skip + keys, pa.string()).slice(skip)]))
    from_bytes.add_all(k.encode() for k in keys)
    assert from_arrow.serialize() == from_bytes.serialize()


@SETTINGS
@given(st.lists(st.binary(min_size=1, max_size=12), unique=True, max_size=70), st.integers(min_value=0, max_value=70),
       st.integers(min_value=1, max_value=20), st.integers(min_value=1, max_value=4))
def test_a_filter_read_back_and_extended_is_the_filter_of_all_its_keys(keys, split, per_row, bound_rows):
    # a rewrite grows the filter of the file it replaces: read back (past the bound: round-robin), it must put the
    # next keys in the rows a filter that took every key in one go puts them
    bound = per_row * bound_rows - (per_row // 2 if per_row > 1 else 0)  # a bound between two rows' counts, too
    first, whole = BloomFilter(per_row, 0.01, bound), BloomFilter(per_row, 0.01, bound)
    first.add_all(keys[:split])
    whole.add_all(keys)
    grown = BloomFilter.extendable(first.serialize(), "t", per_row, 0.01, bound)
    assert grown is not None and grown.key_count == min(split, len(keys))
    grown.add_all(keys[split:])
    assert grown.serialize() == whole.serialize()
    assert grown.key_count == len(keys)


@SETTINGS
@given(st.lists(st.text(max_size=12), max_size=60), st.lists(st.text(max_size=12), max_size=40),
       st.integers(min_value=1, max_value=20))
def test_membership_of_arrow_strings_is_might_contain_of_each(held, asked, per_row):
    bloom = BloomFilter(per_row, 0.01, per_row * 3)
    bloom.add_all(k.encode() for k in held if k)
    keys = held + asked
    bits, probe = FilterBits.read(bloom.serialize(), "t"), KeyPositions(pa.chunked_array([pa.array(keys)]))
    got = bits.might_contain(probe)
    assert got.tolist() == [bloom.might_contain(k.encode()) for k in keys]
    assert all(got[:len(held)])
    among = np.arange(len(keys))[::2]
    assert bits.might_contain(probe, among).tolist() == got[among].tolist()


def test_a_filter_whose_bits_are_not_base64_is_refused_where_they_are_read():
    bloom = BloomFilter(10, 0.01, 30)
    bloom.add_all([b"a", b"b"])
    text = bytearray(bloom.serialize())
    text[52:56] = b"!!!!"  # bytes 39-41: the first row's bits 8-31 (its bytes start at 38)
    bits = FilterBits.read(bytes(text), "t")  # the headers are intact
    with pytest.raises(CorruptTableError, match="unreadable bloom filter"):
        bits.might_contain(KeyPositions(pa.array([f"key{i}" for i in range(100)])))
    with pytest.raises(CorruptTableError, match="unreadable bloom filter"):
        BloomFilter.deserialize(bytes(text), "t")


def test_a_filter_of_other_settings_is_not_extended():
    first = BloomFilter(10, 0.01, 30)
    first.add_all([b"a", b"b"])
    assert BloomFilter.extendable(first.serialize(), "t", 20, 0.01, 60) is None  # other row size
    assert BloomFilter.extendable(first.serialize(), "t", 10, 0.001, 30) is None  # other false positive rate
    full = BloomFilter(10, 0.01, 30)
    full.add_all([str(i).encode() for i in range(35)])  # three rows, then round-robin
    assert BloomFilter.extendable(full.serialize(), "t", 10, 0.01, 30) is not None
    assert BloomFilter.extendable(full.serialize(), "t", 10, 0.01, 20) is None  # more rows than that bound opens
    with pytest.raises(CorruptTableError, match="unreadable bloom filter"):
        BloomFilter.extendable(b"not base64!", "t", 10, 0.01, 30)


def test_a_bloom_filter_is_the_same_however_its_keys_are_split():
    # keys are hashed in chunks (bounded memory): chunk boundaries must not change which row a key lands in
    keys = [f"key-{i}".encode() for i in range(70_001)]
    whole, parts = BloomFilter(5000, 0.01, 20_000), BloomFilter(5000, 0.01, 20_000)
    whole.add_strings(pa.array([k.decode() for k in keys]))
    for start, end in ((0, 1), (1, 33_000), (33_000, 70_001)):
        parts.add_all(keys[start:end])
    assert whole.serialize() == parts.serialize()
    assert all(whole.might_contain(k) for k in keys[::997])


def test_bloom_filter_sizes_follow_hudi():
    # BloomFilterUtils: bits = ceil(n * -ln(p) / ln(2)^2), hashes = ceil(ln(2) * bits / n)
    assert (BloomFilter(10_000, 1e-9, 100_000).vector_size, BloomFilter(10_000, 1e-9, 100_000).hash_count) == \
        (431328, 30)
    assert BloomFilter(60_000, 1e-9, 100_000).vector_size == 2587966
    with pytest.raises(InvalidDataError):
        BloomFilter(10, 0.01, 100).add_all([b""])


# ------------------------------------------------------------------------------------------ Avro records

SCHEMA9 = metadata_schema_json(9)
record_keys = st.text(min_size=1, max_size=15)


def _files_record(key: str, files: dict[str, int]) -> dict:
    """A `files` record listing the files of size > 0 and deleting those of size 0."""
    return file_list_record(key, {n: s for n, s in files.items() if s}, [n for n, s in files.items() if not s])


file_maps = st.dictionaries(st.text(min_size=1, max_size=10), st.integers(min_value=0, max_value=2**40), max_size=4)


@SETTINGS
@given(st.dictionaries(record_keys, file_maps, max_size=20), st.booleans())
def test_avro_records_round_trip_with_keys_restored(content, with_bloom):
    records = {k: _files_record(k, files) for k, files in content.items()}
    bloom = BloomFilter(100, 1e-6, 1000) if with_bloom else None
    raw = write_avro_hfile(records, SCHEMA9, bloom_filter=bloom, block_size=256, created_ms=7)
    reader = AvroHFileReader(raw, "records.hfile")
    assert dict(reader) == records
    assert [k for k, _ in reader] == sorted(records, key=lambda k: k.encode())
    parsed = fastavro.parse_schema(json.loads(SCHEMA9))
    for key in list(records)[:3]:
        assert reader.get(key) == records[key]
        stored = fastavro.schemaless_reader(io.BytesIO(reader.hfile.get(key.encode())), parsed, None)
        assert stored["key"] == ""  # the value leaves the key to the HFile key, as Hudi's writers do
    probes = ["\x00absent", *records]
    assert reader.get_many(probes) == {k: records[k] for k in probes if k in records}
    assert (b"bloomFilter" in reader.hfile.meta_index) == with_bloom


def test_a_record_that_does_not_fit_the_schema_is_refused():
    with pytest.raises(InvalidDataError, match="'p'"):
        write_avro_hfile({"p": {"key": "p", "type": "not an int"}}, SCHEMA9)


# ------------------------------------------------------------------------------------------- log blocks


@SETTINGS
@given(st.dictionaries(record_keys, file_maps, max_size=10))
def test_hfile_log_blocks_round_trip(content):
    records = {k: _files_record(k, files) for k, files in content.items()}
    raw = encode_hfile_data_block(records, SCHEMA9, "20240101000000000", created_ms=3)
    (block,) = read_blocks(raw, "x.log")
    assert block.block_type == BlockType.HFILE_DATA and int(block.block_type) == 4
    assert block.instant_time == "20240101000000000" and block.schema_json == SCHEMA9
    assert dict(decode_hfile_data_block(block, "x.log")) == records


def test_an_hfile_block_without_schema_is_corrupt():
    raw = encode_hfile_data_block({}, SCHEMA9, "20240101000000000")
    block = read_blocks(raw, "x.log")[0]
    stripped = dataclasses.replace(block, header={k: v for k, v in block.header.items() if k != HeaderKey.SCHEMA})
    with pytest.raises(CorruptTableError, match="no SCHEMA header"):
        decode_hfile_data_block(stripped, "x.log")


# ------------------------------------------------------------------------------------ reference tables


def _base_files(reference_dir: Path) -> list[Path]:
    found = [Path(p) for t in META_TABLES for p in glob.glob(f"{reference_dir}/{t}/.hoodie/metadata/*/*.hfile")]
    assert found
    return sorted(found)


def _every_hfile(reference_dir: Path):
    """(where, HFile bytes) of every base file and HFile log block of the reference metadata tables."""
    for path in _base_files(reference_dir):
        yield str(path), path.read_bytes()
    for table in META_TABLES:
        for path in sorted(glob.glob(f"{reference_dir}/{table}/.hoodie/metadata/*/.*.log.*")):
            for block in read_blocks(Path(path).read_bytes(), path):
                if block.block_type == BlockType.HFILE_DATA:
                    yield f"{path}@{block.offset}", bytes(block.content)


def test_every_reference_hfile_reads_in_key_order(reference_dir):
    """Hudi sorts keys by their UTF-8 bytes, unsigned, which is the order the reader relies on."""
    versions = set()
    for where, raw in _every_hfile(reference_dir):
        reader = HFileReader(raw, where)
        entries = list(reader)
        keys = [k for k, _ in entries]
        assert keys == sorted(keys) and len(set(keys)) == len(keys) == reader.entry_count, where
        assert reader.last_key == (keys[-1] if keys else None)
        for key, value in entries[:20]:
            assert reader.get(key) == value and reader.get(key + b"\x00") is None
        versions.add(reader.file_info[b"schema"].decode())
    assert versions == {metadata_schema_json(8), metadata_schema_json(9)}


def test_reference_bloom_filters_are_reproduced_bit_for_bit(reference_dir):
    for path in _base_files(reference_dir):
        reader = HFileReader(path.read_bytes(), str(path))
        stored = reader.meta_block(b"bloomFilter")
        assert reader.file_info[b"bloomFilterTypeCode"] == b"DYNAMIC_V0"
        original = BloomFilter.deserialize(stored, str(path))
        assert all(original.might_contain(k) for k, _ in reader)
        ours = BloomFilter(original.row_capacity, 1e-9, 100_000)
        ours.add_all(k for k, _ in reader)
        assert ours.serialize() == stored, path


def _rewrite_metadata_hfiles(table_dir: Path, drop_key: str | None = None) -> None:
    """Rewrite every HFile of the table's metadata table (base files, HFile log blocks) with our writer,
    leaving out `drop_key`; the other log blocks stay as they are."""
    metadata = table_dir / ".hoodie" / "metadata"
    for path in metadata.glob("*/*.hfile"):
        original = AvroHFileReader(path.read_bytes(), str(path))
        records = {k: r for k, r in original if k != drop_key}
        stored = BloomFilter.deserialize(original.hfile.meta_block(b"bloomFilter"), str(path))
        path.write_bytes(write_avro_hfile(records, original.schema_json,
                                          bloom_filter=BloomFilter(stored.row_capacity, 1e-9, 100_000)))
    for path in metadata.glob("*/.*.log.*"):
        raw = path.read_bytes()
        blocks = []
        for block in read_blocks(raw, str(path)):
            if block.block_type == BlockType.HFILE_DATA:
                records = {k: r for k, r in decode_hfile_data_block(block, str(path)) if k != drop_key}
                blocks.append(encode_hfile_data_block(records, block.schema_json, block.instant_time))
            else:
                blocks.append(raw[block.offset:block.offset + block.size])
        path.write_bytes(b"".join(blocks))


def test_hudi_rs_takes_its_file_listing_from_our_hfiles(reference_dir, tmp_path):
    """hudi-rs lists a version 8 table through its metadata table: with every HFile in it rewritten by us (in
    Hudi 1.1's layout where Hudi 1.0's HBase writer had made them) it reads the same rows, and without one
    partition's listing it misses that partition's rows (so the listing really came from our files)."""
    source = reference_dir / "quickstart_mor_avro_v8_trips_8i3u1d"
    columns = ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name", "fare"]
    expected = rows(hudi_rs(str(source)), columns)
    for drop in (None, "city=sao_paulo"):
        copy = tmp_path / f"copy-{drop}"
        shutil.copytree(source, copy, copy_function=shutil.copyfile)  # the reference files are read-only
        _rewrite_metadata_hfiles(copy, drop)
        got = rows(hudi_rs(str(copy)), columns)
        assert got == [r for r in expected if r[1] != drop]
        assert len(got) < len(expected) if drop else got == expected
