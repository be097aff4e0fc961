"""The metadata table's record_index partition (hudi_ds.metadata.record_index, record_index_sync): Hudi's key ->
file group hash, the record codec, lookups in the record indexes Apache Hudi wrote into the reference tables, and
the index kept in step by every write (ours and into copies of Hudi's), built when enabled, dropped when not."""

from __future__ import annotations

import json
import shutil
from collections import defaultdict

import numpy as np
import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import REFERENCE_DIR, hudi_rs, rows

from hudi_ds import HudiTable, faults
from hudi_ds.cli import app as cli
from hudi_ds.config.properties import dumps, loads
from hudi_ds.config.table_config import load_config
from hudi_ds.errors import ConfigError
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.index.lookup import KeyLookup
from hudi_ds.log import BlockType, read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block
from hudi_ds.metadata import record_index as ri
from hudi_ds.metadata import record_index_codec as codec
from hudi_ds.metadata import record_index_entries as entries
from hudi_ds.metadata import record_index_sync as rs
from hudi_ds.metadata import records as md
from hudi_ds.metadata.hfiles import encode_base_file, encode_encoded_base_file
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import merged_records
from hudi_ds.storage import open_storage
from hudi_ds.write import commit as write_commit

LOCATED = ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name"]
SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RLI_TABLES = ["cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta", "mor_avro_v9_txns_simple_overwrite",
              "cow_v9_timebasedkeygen_epochmillis", "quickstart_mor_avro_v8_trips_8i3u1d"]


def _java_hash_by_definition(text: str) -> int:
    """s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, reduced to a signed 32-bit int (the JDK's spec of
    String.hashCode), computed without the incremental masking the implementation uses."""
    units = text.encode("utf-16-be")
    codes = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    total = sum(c * 31 ** (len(codes) - 1 - i) for i, c in enumerate(codes)) % 2**32
    return total - 2**32 if total >= 2**31 else total


@pytest.mark.parametrize(("text", "expected"), [
    ("", 0), ("hello", 99162322), ("Aa", 2112), ("BB", 2112),
    ("polygenelubricants", -2**31),  # Integer.MIN_VALUE: Java's Math.abs leaves it negative
])
def test_java_string_hash_known_values(text, expected):
    assert ri.java_string_hash(text) == expected


def test_the_minimum_hash_lands_in_a_file_group():
    assert ri.file_group_of("polygenelubricants", 10) == 2**31 % 10


@SETTINGS
@given(st.text(max_size=40), st.integers(min_value=1, max_value=1000))
def test_hash_and_file_group_follow_the_definition(text, count):
    h = _java_hash_by_definition(text)
    assert ri.java_string_hash(text) == h
    assert 0 <= ri.file_group_of(text, count) < count


@SETTINGS
@given(st.lists(st.one_of(st.text(max_size=40), st.text(alphabet="abcXYZ-019", max_size=40)), max_size=30),
       st.integers(min_value=1, max_value=1000))
def test_hashing_many_keys_at_once_equals_one_by_one(keys, count):
    assert ri.file_groups_of(keys, count) == [ri.file_group_of(k, count) for k in keys]


@SETTINGS
@given(st.text(min_size=1, max_size=30), st.text(max_size=30), st.one_of(st.uuids().map(str), st.text(max_size=20)),
       st.integers(min_value=0, max_value=99), st.integers(min_value=0, max_value=2**45))
def test_location_records_round_trip(key, partition, head, part, instant_ms):
    file_id = f"{head}-{part}"
    loc = md.record_location(ri.location_record(key, partition, file_id, instant_ms))
    assert loc == md.RecordLocation(partition, file_id, instant_ms, None)


@SETTINGS
@given(st.lists(st.text(min_size=1, max_size=20), unique=True, max_size=40), st.data(),
       st.integers(min_value=1, max_value=5), st.sampled_from([8, 9]))
def test_a_writes_entries_built_column_wise_are_the_records_one_by_one(keys, data, count, version):
    """The column-wise entries of a write: each key in its file group, the files' bytes those of its records
    encoded one at a time (fast codec and fastavro alike)."""
    places = [("p1", "11111111-2222-3333-4444-555555555555-0", 7), ("", "odd-file", 2**40), ("p1", "f-1", 0),
              ("p2", "f-2"), ("p2", "f-2", 5)]  # a place without an instant is at the write's (5)
    locations = [data.draw(st.sampled_from(places)) for _ in keys]
    groups = entries.group_entries(keys, locations, count, version, instant_ms=5)
    located = {key: (*place, 5)[:3] for key, place in zip(keys, locations, strict=True)}
    assert sorted(k for column, _ in groups.values() for k in column.to_pylist()) == sorted(keys)
    for index, (column, values) in groups.items():
        records = {k: ri.location_record(k, *located[k]) for k in column.to_pylist()}
        assert all(ri.file_group_of(k, count) == index for k in records)
        one_by_one = encode_base_file(records, version, created_ms=1)
        assert encode_encoded_base_file(column, values, version, created_ms=1) == one_by_one
        assert encode_base_file(records, version, created_ms=1, encoder=codec.encode) == one_by_one


@SETTINGS
@given(st.lists(st.tuples(st.text(alphabet="abc", max_size=3), st.integers(min_value=0, max_value=2)), max_size=30),
       st.integers(min_value=1, max_value=4))
def test_a_key_placed_twice_is_placed_where_its_last_copy_says(placements, count):
    places = [("p1", "f-1"), ("p2", "f-2"), ("", "f-3")]
    keys = pa.array([k for k, _ in placements], pa.string())
    codes = np.array([c for _, c in placements], dtype=np.int64)
    last = dict(placements)  # a dict keeps the last value of a key
    once = entries.group_entries(list(last), [places[c] for c in last.values()], count, 9, instant_ms=5)
    twice = entries.group_coded_entries(keys, codes, places, count, 9, instant_ms=5)
    assert {i: (k.to_pylist(), v.to_pylist()) for i, (k, v) in twice.items()} == \
        {i: (k.to_pylist(), v.to_pylist()) for i, (k, v) in once.items()}


def newest_locations(table: pa.Table) -> dict[str, tuple[str, str]]:
    """Key -> (partition, file id) of its newest row (a key a non-global index holds in several partitions, or
    that Hudi wrote twice, is indexed where it was written last)."""
    newest: dict[str, tuple[str, str, str]] = {}
    for r in table.select([*LOCATED, "_hoodie_commit_time"]).to_pylist():
        where = (r["_hoodie_commit_time"], r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0])
        newest[r["_hoodie_record_key"]] = max(newest.get(r["_hoodie_record_key"], where), where)
    return {key: (partition, file_id) for key, (_, partition, file_id) in newest.items()}


@pytest.mark.parametrize("table", RLI_TABLES)
def test_every_key_maps_to_the_file_group_that_holds_it(reference_dir, table):
    """All keys of the table, looked up at once and in small batches: each maps to the latest file group holding
    it (cow_v9_timebasedkeygen_epochmillis holds a key twice, Hudi's record index names the newer copy)."""
    table_dir = reference_dir / table
    expected = newest_locations(HudiTable(str(table_dir)).to_arrow())
    storage = open_storage(str(table_dir))
    data_timeline = load_config(storage).format.load_timeline(storage)
    mdt = MetadataTable.open(storage)
    everything = ri.all_locations(mdt, data_timeline)
    assert {k: (loc.partition, loc.file_id) for k, loc in everything.items()} == expected
    keys = sorted(expected)
    for start in range(0, len(keys), 3):
        batch = [*keys[start:start + 3], "no-such-key"]
        found = ri.lookup(mdt, data_timeline, batch)
        assert {k: (loc.partition, loc.file_id) for k, loc in found.items()} == {k: expected[k] for k in batch[:-1]}


# ------------------------------------------------------------------------------------- kept in step by writes

RLI_OPTIONS = {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
               "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3",
               "hoodie.metadata.record.index.min.filegroup.count": "4"}


def trips(ids, ts: int, city: str = "sf") -> pa.Table:
    ids = list(ids)
    return pa.table({"uuid": [f"u{i}" for i in ids], "ts": [ts] * len(ids), "city": [city] * len(ids),
                     "fare": [float(i * ts) for i in ids]})


def assert_index_in_step(path) -> int:
    """The record index holds exactly the table's keys, each at the file group that holds it (and hudi-rs,
    which reads the metadata table's listing, reads the same rows); returns the key count."""
    table = HudiTable(str(path))
    ours = table.to_arrow()
    expected = newest_locations(ours)
    index = ri.all_locations(MetadataTable.open(table.storage), table.load_timeline())
    assert {k: (loc.partition, loc.file_id) for k, loc in index.items()} == expected
    assert rows(hudi_rs(str(path)), LOCATED[:2]) == rows(ours, LOCATED[:2])
    return len(expected)


def test_a_compaction_folds_the_entries_into_the_records_merged_one_by_one(tmp_path):
    """The record index's compaction merges a file group's base file and logs (placements, moves, DELETE
    blocks) as columns: its base files hold the entries the record-by-record merge and encoding give."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={**RLI_OPTIONS, "hoodie.metadata.compact.max.delta.commits": "100",
                                  "hoodie.index.type": "RECORD_INDEX",
                                  "hoodie.record.index.update.partition.path": "true"})
    t.write(trips(range(40), 1))
    t.write(trips(range(30, 60), 2, "la"))
    t.write(trips(range(0, 50, 3), 3), operation="delete")
    mdt = MetadataTable.open(t.storage)
    slices = rs.compaction_slices(mdt, mdt.timeline())
    assert any(sl.logs for _, sl in slices)
    folded = 0
    for (_, sl), stat in zip(slices, rs.compact(mdt, slices, "20990101000000000"), strict=True):
        ours = list(AvroHFileReader(mdt.storage.read_bytes(stat.path), stat.path).hfile)
        records = merged_records(mdt, sl, decoder=codec.decode)
        one_by_one = encode_base_file(records, mdt.version, encoder=codec.encode)
        assert ours == list(AvroHFileReader(one_by_one, "one-by-one.hfile").hfile)
        folded += len(ours)
    assert folded == len(ri.all_locations(mdt, t.load_timeline())) == 60 - len(range(0, 50, 3))


@pytest.mark.parametrize(("table_type", "index"), [
    ("COPY_ON_WRITE", "SIMPLE"), ("MERGE_ON_READ", "SIMPLE"), ("MERGE_ON_READ", "BUCKET"),
    ("COPY_ON_WRITE", "GLOBAL_SIMPLE"), ("MERGE_ON_READ", "GLOBAL_BLOOM")])
def test_every_write_keeps_the_record_index_in_step(tmp_path, table_type, index):
    """Inserts, updates, deletes, partition moves (global indexes), enough commits for the metadata table to
    compact and clean (the record index folds with it) and an overwrite of the whole table."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         table_type=table_type, options={**RLI_OPTIONS, "hoodie.index.type": index},
                         **({"buckets": 2} if index == "BUCKET" else {}))
    assert t.config.metadata_partitions == ["files", "record_index"]
    t.write(trips(range(10), 1))
    assert assert_index_in_step(path) == 10
    t.write(trips(range(5, 15), 2))
    t.write(trips(range(0, 3), 3), operation="delete")
    assert assert_index_in_step(path) == 12
    t.write(trips(range(20, 25), 3, "la"))
    t.write(trips(range(5, 8), 4, "la"))  # a global index moves these keys; the others keep them in both
    assert_index_in_step(path)
    for n in range(5):
        t.write(trips(range(30 + n, 32 + n), 5))
    assert_index_in_step(path)
    mdt = path / ".hoodie" / "metadata"
    assert list((mdt / "record_index").glob("record-index-0000-0_*.hfile"))  # folded by the compactions
    assert not list((mdt / "record_index").glob(f"*{rs.INIT_INSTANT}*"))  # the first slice was cleaned
    t.write(trips(range(40, 43), 6, "ny"), operation="insert_overwrite_table")
    assert assert_index_in_step(path) == 3


def test_enabling_on_an_existing_table_builds_it_and_disabling_drops_it(tmp_path):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
                                  "hoodie.index.type": "SIMPLE"})
    t.write(trips(range(30), 1))
    t.write(trips(range(10), 2, "la"))
    HudiTable(str(path), options={"hoodie.metadata.record.index.enable": "true"}).write(trips(range(50, 52), 3))
    assert HudiTable(str(path)).config.metadata_partitions == ["files", "record_index"]
    groups = {p.name.split("_")[0] for p in (path / ".hoodie" / "metadata" / "record_index").glob("*.hfile")}
    assert groups == {ri.file_group_id(i) for i in range(10)}  # Hudi's default minimum
    assert_index_in_step(path)  # the non-global index holds u0..u9 twice: the newer copy is indexed
    HudiTable(str(path)).write(trips(range(60, 62), 4))
    assert_index_in_step(path)
    HudiTable(str(path), options={"hoodie.metadata.record.index.enable": "false"}).write(trips(range(1), 5))
    assert HudiTable(str(path)).config.metadata_partitions == ["files"]
    assert not (path / ".hoodie" / "metadata" / "record_index").exists()


def test_the_record_index_outlives_version_changes(tmp_path):
    """An upgrade or downgrade between 8 and 9 rebuilds the metadata table with its record index (hudi-py
    upgrade/downgrade), and RECORD_INDEX writes find their keys after it."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={**RLI_OPTIONS, "hoodie.write.table.version": "8", "hoodie.index.type": "RECORD_INDEX"})
    t.write(trips(range(10), 1))
    for version, command in ((9, "upgrade"), (8, "downgrade")):
        assert cli.main([command, str(path), "--to", str(version)]) == 0
        changed = HudiTable(str(path))
        assert (changed.config.version, changed.config.metadata_partitions) == (version, ["files", "record_index"])
        changed.write(trips(range(5, 12), version))
        assert assert_index_in_step(path) == 12
        assert len(changed.to_arrow()) == 12  # the updated keys found their file groups: none twice


def test_a_bootstrap_killed_before_its_switch_is_invisible_and_redone(tmp_path, monkeypatch):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true"})
    t.write(trips(range(6), 1))

    def killed(*args: object) -> None:
        raise faults.InjectedFault("killed")

    monkeypatch.setattr(rs, "write_data_partitions", killed)
    enabled = {"hoodie.metadata.record.index.enable": "true"}
    with pytest.raises(faults.InjectedFault):
        HudiTable(str(path), options=enabled).write(trips(range(2), 2))
    monkeypatch.undo()
    assert (path / ".hoodie" / "metadata" / "record_index").is_dir()
    assert HudiTable(str(path)).config.metadata_partitions == ["files"]  # readers and writers ignore it
    HudiTable(str(path)).write(trips(range(7, 8), 3))
    HudiTable(str(path), options=enabled).write(trips(range(8, 9), 4))
    assert assert_index_in_step(path) == 8


def test_a_record_index_needs_the_metadata_table(tmp_path):
    with pytest.raises(ConfigError, match="hoodie.metadata.enable=true"):
        HudiTable.create(str(tmp_path / "t"), table_name="trips", record_key="uuid", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": "false",
                                  "hoodie.metadata.record.index.enable": "true"})
    assert not (tmp_path / "t" / ".hoodie").exists()
    # on by default on version 9 tables: the record index comes with it
    t = HudiTable.create(str(tmp_path / "t"), table_name="trips", record_key="uuid", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.metadata.record.index.enable": "true"})
    assert {"files", "record_index"} <= set(t.config.metadata_partitions)


def test_a_rolled_back_write_leaves_nothing_in_the_record_index(tmp_path, monkeypatch):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={**RLI_OPTIONS, "hoodie.index.type": "SIMPLE"})
    t.write(trips(range(5), 1))

    def fail_at(name: str) -> None:
        if name == "commit_publishing":  # the metadata deltacommit is written, the data commit is not
            raise faults.InjectedFault("killed before its commit")

    monkeypatch.setattr(faults, "pause_point", fail_at)
    with pytest.raises(faults.InjectedFault):
        t.write(trips(range(3, 9), 2))
    monkeypatch.undo()
    HudiTable(str(path), options={"hoodie.client.heartbeat.timeout.secs": "0"}).write(trips(range(1), 3))
    assert assert_index_in_step(path) == 5


@pytest.mark.parametrize("index", [None, "RECORD_INDEX"])
@pytest.mark.parametrize("reference", ["mor_avro_v9_txns_simple_overwrite", "cow_v9_txns_simple_meta"])
def test_writes_into_a_hudi_table_keep_its_record_index(tmp_path, monkeypatch, reference, index):
    """A copy of a table Apache Hudi 1.1 wrote with a record index, its column statistics dropped as Hudi's
    writer drops a disabled index (the partition deleted, hoodie.table.metadata.partitions updated): an upsert
    of old and new keys and a delete, with the table's default index or with RECORD_INDEX (tagging by Hudi's
    record index alone), keep Hudi's record index in step. A table that also holds secondary indexes stays
    refused."""
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / reference, copy, copy_function=shutil.copyfile)
    props_path = copy / ".hoodie" / "hoodie.properties"
    props = loads(props_path.read_text("latin-1"))
    keep = [p for p in props["hoodie.table.metadata.partitions"].split(",") if p not in ("column_stats",
                                                                                          "partition_stats")]
    props["hoodie.table.metadata.partitions"] = ",".join(keep)
    props_path.write_text(dumps(props, "test"), "latin-1")
    for dropped in ("column_stats", "partition_stats"):
        shutil.rmtree(copy / ".hoodie" / "metadata" / dropped)
    table = HudiTable(str(copy), options={"hoodie.index.type": index} if index else None)
    current = table.to_arrow()
    data = current.drop_columns([c for c in current.column_names if c.startswith("_hoodie_")])
    assert_index_in_step(copy)
    held = newest_locations(current)
    if index:
        _no_key_reads(monkeypatch)
    new = data.slice(0, 2).set_column(0, "txn_id", pa.array(["NEW-1", "NEW-2"]))
    table.write(pa.concat_tables([data.slice(0, 2), new]))
    table.write(data.slice(0, 1), operation="delete")
    monkeypatch.undo()
    assert assert_index_in_step(copy) == current.num_rows + 1
    now = newest_locations(HudiTable(str(copy)).to_arrow())
    assert {k: now[k] for k in held if k in now} == {k: held[k] for k in held if k in now}


# ---------------------------------------------------------------------------------- hoodie.index.type=RECORD_INDEX


def _no_key_reads(monkeypatch) -> None:
    def refuse(*args: object) -> None:
        raise AssertionError("a RECORD_INDEX write read the keys of a file slice")

    monkeypatch.setattr(KeyLookup, "_slice_keys", refuse)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_record_index_tags_writes_without_reading_the_tables_keys(tmp_path, monkeypatch, table_type):
    """A RECORD_INDEX table (created with the index alone: it turns the metadata table and its record index on)
    takes upserts and deletes by looking keys up in the record index; an update of a key in another partition
    stays where the key is (hoodie.record.index.update.partition.path defaults to false, as in Hudi)."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         table_type=table_type, options={"hoodie.write.table.version": "9",
                                                         "hoodie.index.type": "RECORD_INDEX"})
    assert t.config.metadata_partitions == ["files", "record_index"] and t.config.index_type == "RECORD_INDEX"
    t.write(trips(range(10), 1))
    held = newest_locations(t.to_arrow())
    _no_key_reads(monkeypatch)
    t.write(trips(range(5, 15), 2))
    t.write(trips(range(8, 10), 3, "la"))
    t.write(trips(range(0, 3), 4, "la"), operation="delete")  # a global delete finds the keys in sf
    monkeypatch.undo()
    assert assert_index_in_step(path) == 12
    now = newest_locations(HudiTable(str(path)).to_arrow())
    assert {k: now[k] for k in held if k in now} == {k: held[k] for k in held if k in now}  # updates stayed
    read = {r["uuid"]: (r["ts"], r["city"]) for r in HudiTable(str(path)).to_arrow().to_pylist()}
    assert read["u9"] == (3, "la") and now["u9"][0] == "sf" and "u0" not in read


def test_the_record_index_tags_integer_keys_by_their_digits(tmp_path, monkeypatch):
    """A key of one integer field is matched as the integer (the record index holds its decimal digits): a
    write's duplicate keys fold to one row, updates and deletes find the keys, new ones are inserted."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="ids", record_key="id", ordering_field="ts", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.index.type": "RECORD_INDEX"})

    def rows_of(ids, ts, city="sf"):
        return pa.table({"id": pa.array(ids, pa.int64()), "ts": [ts] * len(ids), "city": [city] * len(ids)})

    t.write(rows_of(range(0, 200, 2), 1), operation="bulk_insert")
    _no_key_reads(monkeypatch)
    t.write(rows_of([4, 4, 6, 201, 203, 10], 2, "la"))  # 4 twice: one row
    t.write(pa.table({"id": pa.array([8, 201], pa.int64()), "city": ["sf", "la"]}), operation="delete")
    monkeypatch.undo()
    assert assert_index_in_step(path) == 100
    read = {r["id"]: (r["ts"], r["city"]) for r in t.to_arrow().to_pylist()}
    assert read[4] == (2, "la") and read[203] == (2, "la") and 8 not in read and 201 not in read
    located = newest_locations(t.to_arrow())
    assert located["4"][0] == "sf" and located["203"][0] == "la"  # an update stays in its partition
    assert len(read) == 100


def test_the_record_index_moves_keys_when_asked(tmp_path):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.index.type": "RECORD_INDEX",
                                  "hoodie.record.index.update.partition.path": "true"})
    t.write(trips(range(4), 1))
    t.write(trips(range(2), 2, "la"))  # reads the held rows' ordering values, as Hudi merges them (test_audit5_*)
    assert assert_index_in_step(path) == 4
    assert sorted(newest_locations(t.to_arrow())[f"u{i}"][0] for i in range(4)) == ["la", "la", "sf", "sf"]


def test_validate_names_the_keys_the_record_index_gets_wrong(tmp_path, monkeypatch, capsys):
    """`hudi-py validate` compares the record index with the table's keys: after writes whose commits left the
    index as it was, it names the keys the index lacks, still holds and places in the wrong file group."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.index.type": "RECORD_INDEX",
                                  "hoodie.record.index.update.partition.path": "true"})
    t.write(trips(range(10), 1))

    def validated(expect: int) -> dict:
        assert cli.main(["validate", str(path), "--json"]) == expect
        report = json.loads(capsys.readouterr().out)
        return next(c for c in report["checks"] if c["name"] == "record index maps every key to its file group")

    healthy = validated(0)
    assert (healthy["status"], healthy["detail"]) == ("ok", "10 keys")
    monkeypatch.setattr(write_commit, "instant_changes", lambda *args: None)  # the index left behind
    t.write(trips(range(10, 12), 2))
    t.write(trips(range(0, 2), 3), operation="delete")
    t.write(trips(range(5, 6), 4, "la"))  # moves u5 to la
    monkeypatch.undo()
    check = validated(1)
    assert check["status"] == "failed" and check["detail"] == "10 keys"
    lacks, holds, places, remedy = check["errors"]
    assert "lacks 2 key(s)" in lacks and "'u10', 'u11'" in lacks
    assert "holds 2 key(s) the table no longer holds" in holds and "'u0', 'u1'" in holds
    assert "places 1 key(s)" in places and "'u5' in sf/" in places and "(held in la/" in places
    assert "hudi-py metadata drop" in remedy


def test_the_record_index_cannot_be_turned_off_under_it(tmp_path):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         options={"hoodie.write.table.version": "9", "hoodie.index.type": "RECORD_INDEX"})
    t.write(trips(range(2), 1))
    for off in ("hoodie.metadata.enable", "hoodie.metadata.record.index.enable"):
        with pytest.raises(ConfigError, match="RECORD_INDEX finds keys in the metadata table's record index"):
            HudiTable(str(path), options={off: "false"}).write(trips(range(1), 2))
    assert HudiTable(str(path)).config.metadata_partitions == ["files", "record_index"]


# ------------------------------------------------------------------------------------------ the fast codec

_LONGS = st.one_of(st.none(), st.integers(min_value=-2**63, max_value=2**63 - 1))
_INTS = st.one_of(st.none(), st.integers(min_value=-2**31, max_value=2**31 - 1))
_INFOS = st.fixed_dictionaries({
    "partitionName": st.one_of(st.none(), st.text(max_size=20)), "fileIdHighBits": _LONGS, "fileIdLowBits": _LONGS,
    "fileIndex": _INTS, "fileId": st.one_of(st.none(), st.text(max_size=40)), "instantTime": _LONGS,
    "fileIdEncoding": st.integers(min_value=-2**31, max_value=2**31 - 1), "position": _LONGS})


@SETTINGS
@given(st.text(min_size=1, max_size=20), _INFOS, st.sampled_from([8, 9]))
def test_the_fast_codec_writes_and_reads_fastavros_bytes(key, info, version):
    """Any record index record: the codec's bytes are fastavro's (through an HFile, as written), and both
    decoders read them back alike."""
    record = md.record_index_record(key, dict(info))
    fast = encode_base_file({key: record}, version, created_ms=1, encoder=codec.encode)
    assert fast == encode_base_file({key: record}, version, created_ms=1)
    assert list(AvroHFileReader(fast, "x", decoder=codec.decode)) == list(AvroHFileReader(fast, "x")) == [
        (key, record)]


def test_the_fast_codec_leaves_other_records_to_fastavro(reference_dir):
    files = md.file_list_record("p", {"a.parquet": 5})
    assert codec.encode(files) is None
    with_meta = {**md.record_index_record("", {"partitionName": "p", "fileId": "f", "fileIdEncoding": 1}),
                 "_hoodie_commit_time": "1"}
    assert codec.encode(with_meta) is None
    decoded = defaultdict(int)
    for path in (reference_dir / "cow_v9_txns_simple_meta" / ".hoodie" / "metadata").glob("*/*"):
        if path.suffix == ".hfile":
            readers = [AvroHFileReader(path.read_bytes(), str(path))]
        elif ".log." in path.name:
            readers = [decode_hfile_data_block(b, str(path)) for b in read_blocks(path.read_bytes(), str(path))
                       if b.block_type == BlockType.HFILE_DATA]
        else:
            continue
        for reader in readers:
            for raw_key, value in reader.hfile:
                fast = codec.decode(value, raw_key.decode())
                assert fast is None or fast == reader.get(raw_key.decode())
                decoded[(path.parent.name, fast is not None)] += 1
    # Hudi's log blocks take the fast path; its base files name themselves in _hoodie_file_name: fastavro's
    assert decoded[("record_index", True)] > 0 and decoded[("record_index", False)] > 0
    assert not any(fast for (partition, fast) in decoded if partition != "record_index")
