"""Apache Hudi 1.x's secondary indexes (hudi_ds.metadata.secondary_index): the reference tables' indexes read as
they would be rebuilt from the table's rows (ours and hudi-rs's), their keys' escaping and file groups,
`hudi-py validate` finding an index that is not in step, and writes into copies of those tables keeping them in
step (hudi_ds.metadata.secondary_index_sync)."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import REFERENCE_DIR, hudi_rs, rows

from hudi_ds import HudiTable, faults
from hudi_ds.cli.validate import validate
from hudi_ds.errors import CorruptTableError, UnsupportedTableError
from hudi_ds.hfile.avro_records import encode_values
from hudi_ds.hfile.reader import HFileReader
from hudi_ds.metadata import records as md
from hudi_ds.metadata.avro_schema import metadata_schema_json
from hudi_ds.metadata.layout import MetadataTable, listed_partitions
from hudi_ds.metadata.listing import compacted_before, is_folded
from hudi_ds.metadata.secondary_index import (
    LIVE_VALUE,
    SecondaryIndex,
    decode,
    escape,
    expected_keys,
    file_group_of,
    index_key,
    read_index,
    secondary_indexes,
    split_key,
    unescape,
    value_texts,
)
from hudi_ds.schema.meta import PARTITION_PATH, RECORD_KEY

INDEXES = {
    "cow_v9_txns_simple_meta": [("secondary_index_merchant_idx", "merchant_name", 2),
                                ("secondary_index_txn_date_idx", "txn_date", 2)],
    "mor_avro_v9_txns_simple_meta": [("secondary_index_merchant_idx", "merchant_name", 2),
                                     ("secondary_index_txn_date_idx", "txn_date", 2)],
    "quickstart_mor_avro_v8_trips_8i3u1d": [("secondary_index_rider_idx", "rider", 1)],
}


def _indexes(path: str) -> list[SecondaryIndex]:
    table = HudiTable(path)
    return secondary_indexes(table.storage, listed_partitions(table.storage))


@pytest.mark.parametrize("reference", sorted(INDEXES))
def test_reference_indexes_hold_what_the_rows_rebuild(reference):
    """Each index Hudi wrote holds exactly the keys rebuilt from the snapshot (our reader's and hudi-rs's rows),
    each in the file group its hash names (the whole key in Hudi 1.0's version 1, the value part in 1.1's
    version 2): the format facts the module states."""
    path = str(REFERENCE_DIR / reference)
    table = HudiTable(path)
    indexes = _indexes(path)
    assert [(i.partition, i.column, i.version) for i in indexes] == INDEXES[reference]
    ours = table.to_arrow()
    theirs = hudi_rs(path)
    mdt = MetadataTable.open(table.storage)
    for index in indexes:
        found = read_index(mdt, table.load_timeline(), index)
        assert found.misplaced == []
        for data in (ours, theirs):
            rebuilt = expected_keys(data[RECORD_KEY], value_texts(data[index.column], index.column))
            assert sorted(rebuilt.to_pylist()) == found.keys
        assert len(found.keys) == ours.num_rows


def test_a_version_2_index_keeps_a_values_keys_in_one_file_group():
    index = SecondaryIndex("secondary_index_txn_date_idx", "txn_date", 2)
    groups = {file_group_of(index, index_key("19743", f"TXN-{n:03d}"), 10) for n in range(100)}
    assert groups == {0}  # as the reference table holds 19743's keys
    whole = SecondaryIndex("secondary_index_txn_date_idx", "txn_date", 1)
    assert len({file_group_of(whole, index_key("19743", f"TXN-{n:03d}"), 10) for n in range(100)}) > 1


def test_escaping_as_hudi_writes_it():
    assert index_key(None, "TXN-003") == "\x00$TXN-003"  # as cow_v9_txns_simple_meta holds a null merchant
    assert index_key("a$b\\c", "k\x00") == "a\\$b\\\\c$k\\\x00"
    assert split_key("a\\$b\\\\c$k\\\x00") == ("a\\$b\\\\c$", "k\\\x00")
    with pytest.raises(CorruptTableError, match="no unescaped"):
        split_key("a\\$b")


@settings(deadline=None)
@given(st.one_of(st.none(), st.text(alphabet=st.sampled_from("ab$\\\x00é𝄞")), st.text()),
       st.text(alphabet=st.sampled_from("xy$\\\x00")))
def test_keys_split_back_into_value_and_record_key(value, record_key):
    """Any value (null included) and record key: the key splits at the separator into their escaped forms,
    which unescape back; the column-wise keys equal the one-at-a-time ones."""
    key = index_key(value, record_key)
    value_part, key_part = split_key(key)
    assert value_part == escape(value) + "$"
    assert unescape(value_part[:-1]) == value
    assert unescape(key_part) == record_key
    column = expected_keys(pa.array([record_key]), pa.array([value], pa.string()))
    assert column.to_pylist() == [key]


def test_value_texts_are_the_ones_hudi_writes():
    assert value_texts(pa.array([19743, None], pa.date32()), "d").to_pylist() == ["19743", None]
    assert value_texts(pa.array([-5, 2**40], pa.int64()), "n").to_pylist() == ["-5", "1099511627776"]
    assert value_texts(pa.array([True, False]), "b").to_pylist() == ["true", "false"]
    with pytest.raises(UnsupportedTableError, match="type double"):
        value_texts(pa.array([1.5]), "x")


def _copy(tmp_path, reference: str):
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / reference, copy, copy_function=shutil.copyfile)
    return copy


def _secondary_check(report: dict) -> dict:
    return next(c for c in report["checks"] if c["name"].startswith("secondary indexes"))


@pytest.mark.parametrize("reference", sorted(INDEXES))
def test_validate_checks_the_reference_indexes(tmp_path, reference):
    report = validate(str(_copy(tmp_path, reference)))
    assert report["ok"], report["errors"]
    check = _secondary_check(report)
    assert check["status"] == "ok"
    assert all(f"{p}: " in check["detail"] for p, _, _ in INDEXES[reference])


def test_validate_names_a_lost_and_a_misplaced_key(tmp_path):
    """The base file of file group 3 of merchant_idx (Japan Airlines$TXN-015) deleted: its key is missing; the
    one of file group 5 (British Airways$TXN-012) renamed to file group 1: its key is misplaced."""
    copy = _copy(tmp_path, "cow_v9_txns_simple_meta")
    folder = copy / ".hoodie" / "metadata" / "secondary_index_merchant_idx"
    (next(folder.glob("secondary-index-merchant-idx-0003-0_*.hfile"))).unlink()
    moved = next(folder.glob("secondary-index-merchant-idx-0005-0_*.hfile"))
    moved.rename(folder / moved.name.replace("-0005-0_5-", "-0001-0_1-"))
    report = validate(str(copy))
    assert not report["ok"]
    errors = " ".join(_secondary_check(report)["errors"])
    assert "lacks 1 key(s)" in errors and "'Japan Airlines$TXN-015'" in errors
    assert "'British Airways$TXN-012' in 1 (hashes to 5)" in errors
    assert "DROP INDEX" in errors


def test_validate_names_stale_keys_and_refuses_an_unknown_value_type(tmp_path):
    """The definition of merchant_idx pointed at another column: every key is stale and every row's key
    missing; pointed at a decimal column, whose index text hudi_ds does not know, the check says so."""
    copy = _copy(tmp_path, "cow_v9_txns_simple_meta")
    defs_path = copy / ".hoodie" / ".index_defs" / "index.json"
    defs = json.loads(defs_path.read_text())
    defs["indexDefinitions"]["secondary_index_merchant_idx"]["sourceFields"] = ["currency"]
    defs_path.write_text(json.dumps(defs))
    errors = " ".join(_secondary_check(validate(str(copy)))["errors"])
    assert "holds 12 key(s) no row of the table has" in errors and "lacks 12 key(s)" in errors
    defs["indexDefinitions"]["secondary_index_merchant_idx"]["sourceFields"] = ["amount"]
    defs_path.write_text(json.dumps(defs))
    errors = " ".join(_secondary_check(validate(str(copy)))["errors"])
    assert "UnsupportedTableError" in errors and "decimal" in errors


def test_definitions_hudi_ds_does_not_know_are_refused(tmp_path):
    copy = _copy(tmp_path, "quickstart_mor_avro_v8_trips_8i3u1d")
    defs_path = copy / ".hoodie" / ".index_defs" / "index.json"
    defs = json.loads(defs_path.read_text())
    defs["indexDefinitions"]["secondary_index_rider_idx"]["version"] = "V3"
    defs_path.write_text(json.dumps(defs))
    with pytest.raises(UnsupportedTableError, match="versions V1 and V2"):
        _indexes(str(copy))
    del defs["indexDefinitions"]["secondary_index_rider_idx"]
    defs_path.write_text(json.dumps(defs))
    with pytest.raises(CorruptTableError, match="no definition"):
        _indexes(str(copy))


# ---- writes ------------------------------------------------------------------------------------------------

KEYS = {"cow_v9_txns_simple_meta": ("txn_id", "merchant_name"),
        "mor_avro_v9_txns_simple_meta": ("txn_id", "merchant_name"),
        "quickstart_mor_avro_v8_trips_8i3u1d": ("uuid", "rider")}


def assert_in_step(path: str) -> None:
    """Each index equals what the snapshot rebuilds, hudi-rs reads the rows ours does, and validate's secondary
    index check passes."""
    table = HudiTable(path)
    ours = table.to_arrow()
    mdt = MetadataTable.open(table.storage)
    for index in _indexes(path):
        found = read_index(mdt, table.load_timeline(), index)
        rebuilt = expected_keys(ours[RECORD_KEY], value_texts(ours[index.column], index.column))
        assert found.keys == sorted(rebuilt.to_pylist()), index.partition
        assert found.misplaced == []
        assert rows(hudi_rs(path), [RECORD_KEY, index.column]) == rows(ours, [RECORD_KEY, index.column])
    assert _secondary_check(validate(path))["status"] == "ok"


def _data(table: HudiTable) -> pa.Table:
    current = table.to_arrow()
    return current.drop_columns([c for c in current.column_names if c.startswith("_hoodie_")])


def _with(data: pa.Table, column: str, values: list) -> pa.Table:
    return data.set_column(data.schema.get_field_index(column), column, pa.array(values, data.schema.field(column).type))


@pytest.mark.parametrize("reference", sorted(KEYS))
def test_writes_keep_the_secondary_indexes_in_step(tmp_path, reference):
    """Upserts that change indexed values (to null and to text needing escapes), keep them or lose to the held row
    (an older ordering value), inserts, deletes,
    an overwrite of a partition and a delete_partition: after each the indexes hold what the rows rebuild."""
    copy = str(_copy(tmp_path, reference))
    key, column = KEYS[reference]
    table = HudiTable(copy)
    data = _data(table)
    table.write(_with(data.slice(0, 3), column, ["Changed $ \\ x", None, "\x00"]))
    assert_in_step(copy)
    table.write(data.slice(3, 2))  # values kept
    assert_in_step(copy)
    ordering = table.config.merge_ordering_field()
    older = _with(data.slice(4, 1), column, ["Older"])
    older = _with(older, ordering, [older[ordering][0].as_py() - 10**6])
    table.write(older)  # loses to the row it would replace (event-time ordering): no change
    assert "Older" not in table.to_arrow()[column].to_pylist()
    assert_in_step(copy)
    table.write(_with(data.slice(0, 2), key, ["NEW-1", "NEW-2"]), operation="insert")
    assert_in_step(copy)
    table.write(data.slice(5, 1), operation="delete")
    assert_in_step(copy)
    table.write(_with(data.slice(1, 1), key, ["NEW-3"]), operation="insert_overwrite")
    assert_in_step(copy)
    table.delete_partitions(table.to_arrow()[PARTITION_PATH][0].as_py())
    assert_in_step(copy)
    if table.config.is_mor:
        table.compact()
        assert_in_step(copy)


def test_the_metadata_compaction_folds_the_indexes_and_a_folded_rollback_is_undone(tmp_path):
    """With a metadata compaction at every write, each secondary index file group gets a base file of the
    compaction; rolling back a commit whose deltacommit a compaction folded rebuilds the index's difference
    from the rows."""
    copy = str(_copy(tmp_path, "cow_v9_txns_simple_meta"))
    table = HudiTable(copy, options={"hoodie.metadata.compact.max.delta.commits": "1"})
    data = _data(table)
    first = table.write(_with(data.slice(0, 1), "merchant_name", ["First"]))
    second = table.write(_with(data.slice(0, 1), "merchant_name", ["Second"]))
    assert_in_step(copy)
    folder = tmp_path / "copy" / ".hoodie" / "metadata" / "secondary_index_merchant_idx"
    bases = {p.name.split("_")[0] for p in folder.glob("*.hfile") if first < p.name.rsplit("_", 1)[1][:17]}
    assert bases == {f"secondary-index-merchant-idx-{n:04d}-0" for n in range(10)}
    table.rollback(second)
    assert_in_step(copy)
    mdt = MetadataTable.open(table.storage)
    assert is_folded(mdt.timeline().get(first), compacted_before(mdt.timeline()))
    table.rollback(first)  # its deltacommit was folded by the second write's compaction
    assert_in_step(copy)
    assert HudiTable(copy).to_arrow().filter(pa.compute.equal(
        HudiTable(copy).to_arrow()["txn_id"], data["txn_id"][0]))["merchant_name"].to_pylist() == \
        [data["merchant_name"][0].as_py()]


@settings(deadline=None, max_examples=6, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.tuples(st.sampled_from(["upsert", "insert", "delete"]),
                          st.lists(st.tuples(st.sampled_from(["TXN-001", "TXN-003", "TXN-007", "R-1", "R-2"]),
                                             st.sampled_from([None, "A", "B$", "\\"])),
                                   min_size=1, max_size=3, unique_by=lambda t: t[0])),
                min_size=1, max_size=3))
def test_random_histories_against_a_model(tmp_path_factory, history):
    """Random upserts, inserts and deletes into a copy of a Hudi 1.1 table: the merchant index always holds one
    key per row of a model (record key -> merchant) of what the table should hold."""
    copy = str(_copy(tmp_path_factory.mktemp("h"), "cow_v9_txns_simple_meta"))
    table = HudiTable(copy)
    data = _data(table)
    held = {k: data.slice(i, 1) for i, k in enumerate(data["txn_id"].to_pylist())}  # its partition kept
    model = dict(zip(data["txn_id"].to_pylist(), data["merchant_name"].to_pylist(), strict=True))
    for operation, changes in history:
        if operation == "insert":
            changes = [(k, v) for k, v in changes if k not in model]  # an insert of a held key would duplicate it
            if not changes:
                continue
        batch = pa.concat_tables([_with(_with(held.get(k, data.slice(0, 1)), "txn_id", [k]), "merchant_name", [v])
                                  for k, v in changes])
        held.update((k, batch.slice(i, 1)) for i, (k, _) in enumerate(changes))
        table.write(batch, operation=operation)
        for k, v in changes:
            if operation == "delete":
                model.pop(k, None)
            else:
                model[k] = v
    index = next(i for i in _indexes(copy) if i.column == "merchant_name")
    found = read_index(MetadataTable.open(table.storage), table.load_timeline(), index)
    assert found.keys == sorted(index_key(v, k) for k, v in model.items())
    assert _secondary_check(validate(copy))["status"] == "ok"


def test_a_write_into_an_index_of_a_type_hudi_ds_does_not_know_is_refused_first(tmp_path):
    """An index over a decimal column (whose text hudi_ds has not matched with Hudi's): the write is refused
    before it changes anything."""
    copy = _copy(tmp_path, "cow_v9_txns_simple_meta")
    defs_path = copy / ".hoodie" / ".index_defs" / "index.json"
    defs = json.loads(defs_path.read_text())
    defs["indexDefinitions"]["secondary_index_merchant_idx"]["sourceFields"] = ["amount"]
    defs_path.write_text(json.dumps(defs))
    table = HudiTable(str(copy))
    before = sorted(p.name for p in (copy / ".hoodie" / "timeline").iterdir())
    with pytest.raises(UnsupportedTableError, match="secondary_index_merchant_idx.*decimal"):
        table.write(_data(table).slice(0, 1))
    assert sorted(p.name for p in (copy / ".hoodie" / "timeline").iterdir()) == before


def test_a_version_change_is_refused_rather_than_losing_the_index(tmp_path):
    copy = _copy(tmp_path, "quickstart_mor_avro_v8_trips_8i3u1d")
    props = (copy / ".hoodie" / "hoodie.properties").read_text("latin-1")
    with pytest.raises(UnsupportedTableError, match="secondary_index_rider_idx.*DROP INDEX"):
        HudiTable(str(copy)).upgrade(9)
    assert (copy / ".hoodie" / "hoodie.properties").read_text("latin-1") == props


def test_a_write_killed_before_its_commit_leaves_nothing_in_the_index(tmp_path, monkeypatch):
    """The metadata deltacommit (with its secondary index logs) is written, the data commit is not: the write
    (or the next writer) rolls both back, and the index holds what the rows rebuild."""
    copy = str(_copy(tmp_path, "cow_v9_txns_simple_meta"))
    table = HudiTable(copy)
    data = _data(table)

    folder = tmp_path / "copy" / ".hoodie" / "metadata" / "secondary_index_merchant_idx"
    before = {p.name for p in folder.iterdir()}
    written: set[str] = set()

    def fail_at(name: str) -> None:
        if name == "commit_publishing":
            written.update(p.name for p in folder.iterdir() if p.name not in before)
            raise faults.InjectedFault("killed before its commit")

    monkeypatch.setattr(faults, "pause_point", fail_at)
    with pytest.raises(faults.InjectedFault):
        table.write(_with(data.slice(0, 2), "merchant_name", ["Lost", "Lost"]))
    monkeypatch.undo()
    assert written and all(".log." in name for name in written)  # the index's logs of the lost write
    HudiTable(copy, options={"hoodie.client.heartbeat.timeout.secs": "0"}).write(data.slice(2, 1))
    assert_in_step(copy)
    assert "Lost" not in HudiTable(copy).to_arrow()["merchant_name"].to_pylist()


@pytest.mark.parametrize("version", [8, 9])
def test_live_entries_are_written_and_read_by_hudis_bytes(version):
    """The constant bytes entries are read and written by are fastavro's encoding of a live entry in the table
    version's schema, and what Hudi's reference files hold; other bytes are left to fastavro."""
    _, values = encode_values({"k": md.secondary_index_record("k")}, metadata_schema_json(version))
    assert values[0].as_py() == LIVE_VALUE
    path = next((REFERENCE_DIR / "cow_v9_txns_simple_meta" / ".hoodie" / "metadata" / "secondary_index_merchant_idx")
                .glob("*0006-0_*.hfile"))
    assert {v for _, v in HFileReader(path.read_bytes(), str(path))} == {LIVE_VALUE}
    assert decode(LIVE_VALUE, "a$b") == md.secondary_index_record("a$b")
    assert decode(LIVE_VALUE[:-1] + b"\x01", "a$b") is None  # a tombstone: fastavro's
