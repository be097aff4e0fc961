"""Apache Hudi 1.x's secondary indexes (hudi_ds.metadata.secondary_index): the reference tables' indexes read as
they would be rebuilt from the table's rows (ours and hudi-rs's), their keys' escaping and file groups, and
`hudi-py validate` finding an index that is not in step."""

from __future__ import annotations

import json
import shutil

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tables import REFERENCE_DIR, hudi_rs

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate
from hudi_ds.errors import CorruptTableError, UnsupportedTableError
from hudi_ds.metadata.layout import MetadataTable, listed_partitions
from hudi_ds.metadata.secondary_index import (
    SecondaryIndex,
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
from hudi_ds.schema.meta import RECORD_KEY

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
