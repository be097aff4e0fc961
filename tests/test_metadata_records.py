"""The metadata table's record schema and codec (hudi_ds.metadata): the schema text Hudi writes, Hudi's merge
rules (properties and worked cases), and the reference tables' metadata tables read back: their file listings
equal the files on disk, their record index points at the rows' file groups, their column statistics name
listed files."""

from __future__ import annotations

import os
from collections import defaultdict
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hudi_ds
from hudi_ds.errors import InvalidDataError, UnsupportedTableError
from hudi_ds.files.naming import parse_base_file, parse_log_file
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.log import BlockType, decode_delete_block, read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block, encode_hfile_data_block
from hudi_ds.metadata import records as md
from hudi_ds.metadata.avro_schema import metadata_schema, metadata_schema_json
from hudi_ds.metadata.hfiles import encode_base_file, encode_delete_log_block, encode_log_block
from hudi_ds.storage import open_storage
from hudi_ds.timeline.timeline import Timeline

SETTINGS = settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
META_TABLES = ["cow_v9_timebasedkeygen_epochmillis", "cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta",
               "mor_avro_v9_txns_simple_overwrite", "quickstart_mor_avro_v8_trips_8i3u1d"]
BOOTSTRAP_PREFIX = "0000000000000000"  # the metadata table's own initialising instants (00000000000000000, ...1)

# --------------------------------------------------------------------------------------------------- schema


@pytest.mark.parametrize("version", [8, 9])
def test_schema_parses_and_names_every_field_hudi_reads(version):
    schema = metadata_schema(version)
    fastavro.parse_schema(schema)
    names = [f["name"] for f in schema["fields"]]
    assert names[5:] == ["key", "type", "filesystemMetadata", "BloomFilterMetadata", "ColumnStatsMetadata",
                         "recordIndexMetadata", "SecondaryIndexMetadata"]
    stats = schema["fields"][9]["type"][1]["fields"]
    assert ("valueType" in [f["name"] for f in stats]) == (version == 9)
    with pytest.raises(ValueError):
        metadata_schema_json(6)


def test_schema_text_is_what_hudi_writes(reference_dir):
    """Every metadata HFile embeds the schema text, and every HFile log block repeats it in its header: Hudi
    1.0 (table version 8) and 1.1 (version 9) each use one text, which ours equals byte for byte."""
    seen = defaultdict(set)
    for table in META_TABLES:
        version = 8 if "_v8_" in table else 9
        for path in (reference_dir / table / ".hoodie" / "metadata").glob("*/*.hfile"):
            seen[version].add(AvroHFileReader(path.read_bytes(), str(path)).schema_json)
        for path in (reference_dir / table / ".hoodie" / "metadata").glob("*/.*.log.*"):
            seen[version].update(b.schema_json for b in read_blocks(path.read_bytes(), str(path)) if b.schema_json)
    assert seen == {8: {metadata_schema_json(8)}, 9: {metadata_schema_json(9)}}


# -------------------------------------------------------------------------------------------- builders


def test_builders_make_records_of_the_schema_and_survive_a_log_block():
    records = [md.file_list_record("region=eu", {"a.parquet": 10, ".a_1.log.1_0-1-1": 5}, ["old.parquet"]),
               md.file_list_record("", {"b.parquet": 1}),
               md.partition_list_record(["region=eu", ""])]
    by_key = {r["key"]: r for r in records}
    assert set(by_key) == {"region=eu", ".", "__all_partitions__"}
    block = read_blocks(encode_hfile_data_block(by_key, metadata_schema_json(9), "20240101000000000"), "x")[0]
    decoded = dict(decode_hfile_data_block(block, "x"))
    assert decoded == by_key
    assert md.listed_files(decoded["region=eu"]) == {"a.parquet": 10, ".a_1.log.1_0-1-1": 5}
    assert md.file_infos(decoded["region=eu"])["old.parquet"] == md.FileInfo(0, True)
    assert md.listed_partitions(decoded["__all_partitions__"]) == ["", "region=eu"]
    with pytest.raises(InvalidDataError, match="size > 0"):
        md.file_list_record("p", {"empty.parquet": 0})


# ------------------------------------------------------------------------------------------------ merging


@st.composite
def file_histories(draw):
    """Per file name: added once with its size and/or deleted after, as files come and go on table versions 8
    and 9 (a file is never written twice: each deltacommit writes new log files, and names carry the instant).
    The operations of all files interleave in a random order."""
    names = draw(st.lists(st.sampled_from([f"f{i}" for i in range(8)]), unique=True, max_size=8))
    queues = []
    for name in names:
        added = draw(st.none() | st.integers(min_value=1, max_value=1000))
        deleted = added is None or draw(st.booleans())
        queues.append(([] if added is None else [(name, added)]) + ([(name, None)] if deleted else []))
    ops = []
    while any(queues):
        queue = draw(st.sampled_from([q for q in queues if q]))
        ops.append(queue.pop(0))
    return ops


@SETTINGS
@given(file_histories(), st.data())
def test_file_listing_merge_equals_applying_the_changes_in_order(ops, data):
    model: dict[str, int] = {}
    for name, size in ops:
        if size is None:
            model.pop(name, None)
        else:
            model[name] = size
    versions = [md.file_list_record("p", {} if size is None else {name: size}, [name] if size is None else [])
                for name, size in ops]
    cut = data.draw(st.integers(min_value=0, max_value=len(versions)))  # compacted into the base file up to here
    base = md.merge([], [("p", v) for v in versions[:cut]])
    merged = md.merge(base.items(), [("p", v) for v in versions[cut:]])
    assert md.listed_files(merged["p"]) == model if merged else model == {}


def test_a_deletion_keeps_its_tombstone_until_it_meets_the_file():
    add = md.file_list_record("p", {"a": 5})
    delete = md.file_list_record("p", {}, ["a"])
    logs_only = md.merge([], [("p", delete)])
    assert md.file_infos(logs_only["p"]) == {"a": md.FileInfo(0, True)}
    assert md.file_infos(md.merge([("p", add)], [("p", delete)])["p"]) == {}
    assert md.merge([("p", add)], [("p", None)]) == {}  # a DELETE block entry drops the whole record


def _stats(min_v: Any, max_v: Any, count: int, tight: bool = False, deleted: bool = False) -> dict[str, Any]:
    record = md.file_list_record("x", {})
    wrap = "org.apache.hudi.avro.model.StringWrapper" if isinstance(min_v, str) else \
        "org.apache.hudi.avro.model.BytesWrapper" if isinstance(min_v, bytes) else "org.apache.hudi.avro.model.IntWrapper"
    return {**record, "key": "k", "type": int(md.RecordType.COLUMN_STATS), "filesystemMetadata": None,
            "ColumnStatsMetadata": {"fileName": "f.parquet", "columnName": "c", "minValue": (wrap, {"value": min_v}),
                                    "maxValue": (wrap, {"value": max_v}), "valueCount": count, "nullCount": 1,
                                    "totalSize": 10, "totalUncompressedSize": 20, "isDeleted": deleted,
                                    "isTightBound": tight, "valueType": None}}


def test_column_statistics_merge_widens_adds_or_replaces():
    widened = md.column_stats(md.combine(_stats(5, 9, 3), _stats(1, 7, 2)))
    assert (widened.min_value.value, widened.max_value.value, widened.value_count, widened.null_count,
            widened.total_size) == (1, 9, 5, 2, 20)
    assert md.column_stats(md.combine(_stats(5, 9, 3), _stats(6, 7, 2, tight=True))).value_count == 2
    assert md.combine(_stats(5, 9, 3), _stats(5, 9, 3, deleted=True)) is None
    assert md.merge([("k", _stats(5, 9, 3))], [("k", _stats(0, 0, 0, deleted=True))]) == {}
    # Java's compareTo: strings by UTF-16 code unit (U+FFFF sorts after U+10000), bytes signed (0x80 < 0x01)
    text = md.column_stats(md.combine(_stats("\uffff", "\uffff", 1), _stats("\U00010000", "\U00010000", 1)))
    assert (text.min_value.value, text.max_value.value) == ("\U00010000", "\uffff")
    raw = md.column_stats(md.combine(_stats(b"\x01", b"\x01", 1), _stats(b"\x80", b"\x80", 1)))
    assert (raw.min_value.value, raw.max_value.value) == (b"\x80", b"\x01")


def test_array_bounds_are_not_merged_silently():
    older = _stats(1, 2, 1)
    newer = _stats(1, 2, 1)
    newer["ColumnStatsMetadata"]["minValue"] = ("org.apache.hudi.avro.model.ArrayWrapper", {"wrappedValues": []})
    with pytest.raises(UnsupportedTableError, match="ArrayWrapper"):
        md.combine(older, newer)


def test_record_location_spells_out_uuid_file_ids():
    record = {"key": "TXN-008", "type": 5, "recordIndexMetadata": {
        "partitionName": "region=apac", "fileIdHighBits": 541420586697966898, "fileIdLowBits": -6206175399855160771,
        "fileIndex": 0, "fileId": "", "instantTime": 1772922274124, "fileIdEncoding": 0, "position": None}}
    assert md.record_location(record) == md.RecordLocation(
        "region=apac", "07838327-b037-4532-a9df-3c5b05dd823d-0", 1772922274124, None)
    record["recordIndexMetadata"].update(fileIndex=-1)
    assert md.record_location(record).file_id == "07838327-b037-4532-a9df-3c5b05dd823d"
    record["recordIndexMetadata"].update(fileIdEncoding=1, fileId="bucket-00000001-0")
    assert md.record_location(record).file_id == "bucket-00000001-0"


# ------------------------------------------------------------------------------------ reference tables


def _merged_partition(table_dir: Path, partition: str) -> dict[str, dict[str, Any]]:
    """A metadata partition as a reader sees it: per file group, the latest base file, then the blocks of the
    log files whose deltacommit completed after it (and, but for the metadata table's own initialising
    instants, also completed on the data table), in completion order."""
    data_timeline = Timeline.load(open_storage(str(table_dir)), 2)
    mdt_timeline = Timeline.load(open_storage(str(table_dir / ".hoodie" / "metadata")), 2)
    completion = {i.requested_time: i.completion_time for i in mdt_timeline.completed()}
    folder = table_dir / ".hoodie" / "metadata" / partition
    bases: dict[str, Any] = {}
    logs: dict[str, list[Any]] = defaultdict(list)
    for name in os.listdir(folder):
        base, log = parse_base_file(partition, name), parse_log_file(partition, name)
        if base is not None and (base.file_id not in bases or base.instant > bases[base.file_id].instant):
            bases[base.file_id] = base
        elif log is not None and log.instant in completion and (
                log.instant.startswith(BOOTSTRAP_PREFIX) or data_timeline.contains_completed(log.instant)):
            logs[log.file_id].append(log)
    merged: dict[str, dict[str, Any]] = {}
    for file_id in set(bases) | set(logs):
        base = bases.get(file_id)
        after = base.instant if base else ""
        updates: list[tuple[str, dict[str, Any] | None]] = []
        for log in sorted((lg for lg in logs[file_id] if completion[lg.instant] > after),
                          key=lambda lg: (completion[lg.instant], lg.sort_key())):
            for block in read_blocks((folder / log.name).read_bytes(), log.name):
                if block.block_type == BlockType.HFILE_DATA:
                    updates.extend(decode_hfile_data_block(block, log.name))
                elif block.block_type == BlockType.DELETE:
                    updates.extend((k, None) for k in decode_delete_block(block, log.name).record_keys.to_pylist())
        rows = AvroHFileReader((folder / base.name).read_bytes(), base.name) if base else []
        merged.update(md.merge(rows, updates))
    return merged


@pytest.mark.parametrize("table", META_TABLES)
def test_file_listing_equals_the_files_on_disk(reference_dir, table):
    table_dir = reference_dir / table
    files = _merged_partition(table_dir, md.FILES)
    partitions = md.listed_partitions(files[md.ALL_PARTITIONS_KEY])
    on_disk = sorted(str(p.parent.relative_to(table_dir)) for p in table_dir.rglob(".hoodie_partition_metadata")
                     if ".hoodie" not in p.parent.relative_to(table_dir).parts)
    assert partitions == on_disk
    assert set(files) == {md.ALL_PARTITIONS_KEY, *(md.partition_key(p) for p in partitions)}
    data_timeline = Timeline.load(open_storage(str(table_dir)), 2)
    for partition in partitions:
        listed = md.listed_files(files[md.partition_key(partition)])
        disk = {e.name: e.stat().st_size for e in os.scandir(table_dir / partition)
                if e.name != ".hoodie_partition_metadata"}
        assert listed == disk, partition
        for name in listed:  # each file was written by a commit completed on the data timeline
            parsed = parse_base_file(partition, name) or parse_log_file(partition, name)
            assert parsed is not None and data_timeline.contains_completed(parsed.instant), name


@pytest.mark.parametrize("table", META_TABLES)
def test_record_index_and_column_statistics_agree_with_the_table(reference_dir, table):
    table_dir = reference_dir / table
    rows = hudi_ds.HudiTable(str(table_dir)).to_arrow().select(
        ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]).to_pylist()
    where = {(r["_hoodie_record_key"], r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0])
             for r in rows}
    index = {key: md.record_location(record) for key, record in _merged_partition(table_dir, md.RECORD_INDEX).items()}
    assert set(index) == {r["_hoodie_record_key"] for r in rows}
    assert all((key, loc.partition, loc.file_id) in where for key, loc in index.items())

    files = _merged_partition(table_dir, md.FILES)
    listed = {name for key, record in files.items() if key != md.ALL_PARTITIONS_KEY
              for name in md.listed_files(record)}
    stats = [md.column_stats(r) for r in _merged_partition(table_dir, md.COLUMN_STATS).values()]
    assert stats and {s.file_name for s in stats} <= listed
    partition_stats = [md.column_stats(r) for r in _merged_partition(table_dir, md.PARTITION_STATS).values()]
    assert {s.file_name for s in partition_stats} == set(md.listed_partitions(files[md.ALL_PARTITIONS_KEY]))


def test_a_deleted_key_starts_afresh_in_the_logs():
    base = [("k", _stats(5, 9, 3))]
    revived = md.merge(base, [("k", _stats(0, 0, 0, deleted=True)), ("k", _stats(6, 7, 2))])
    assert md.column_stats(revived["k"]).value_count == 2  # the deleted base statistics are not added in
    partition = md.merge([("p", md.file_list_record("p", {"a": 5}))],
                         [("p", None), ("p", md.file_list_record("p", {"b": 1}))])
    assert md.listed_files(partition["p"]) == {"b": 1}


def test_metadata_files_are_written_as_hudi_writes_them(reference_dir):
    """Base files, HFile log blocks and DELETE blocks of every reference metadata table, rebuilt from their
    decoded records: the same records everywhere, the same bytes as Hudi 1.1 wrote (Hudi 1.0 wrote its HFiles
    through HBase's writer, which lays them out differently) and the same DELETE block content as both."""
    rebuilt: defaultdict[str, int] = defaultdict(int)
    for table in META_TABLES:
        version = 8 if "_v8_" in table else 9
        for path in (reference_dir / table / ".hoodie" / "metadata").glob("*/*.hfile"):
            original = AvroHFileReader(path.read_bytes(), str(path))
            ours = encode_base_file(dict(original), version, created_ms=_created_ms(original))
            assert dict(AvroHFileReader(ours, "ours")) == dict(original)
            assert version == 8 or ours == path.read_bytes(), path
            rebuilt[f"base v{version}"] += 1
        for path in (reference_dir / table / ".hoodie" / "metadata").glob("*/.*.log.*"):
            for block in read_blocks(path.read_bytes(), str(path)):
                if block.block_type == BlockType.HFILE_DATA:
                    reader = decode_hfile_data_block(block, str(path))
                    ours = read_blocks(encode_log_block(dict(reader), version, block.instant_time,
                                                        created_ms=_created_ms(reader)), "x")[0]
                    assert dict(decode_hfile_data_block(ours, "x")) == dict(reader)
                    assert version == 8 or bytes(ours.content) == bytes(block.content), path
                    rebuilt[f"log v{version}"] += 1
                elif block.block_type == BlockType.DELETE:
                    keys = decode_delete_block(block, str(path)).record_keys.to_pylist()
                    ours = read_blocks(encode_delete_log_block(keys, path.parent.name, block.instant_time), "x")[0]
                    assert bytes(ours.content) == bytes(block.content), path
                    rebuilt["delete"] += 1
    assert min(rebuilt[k] for k in ("base v8", "base v9", "log v8", "log v9", "delete")) > 0


def _created_ms(reader: AvroHFileReader) -> int:
    return int.from_bytes(reader.hfile.file_info[b"hfile.CREATE_TIME_TS"], "big", signed=True)
