"""Apache Hudi's index definitions file (.hoodie/.index_defs/index.json, hudi_ds.metadata.index_defs): the
columns its column_stats definition lists are the ones hudi_ds's column_stats and partition_stats writers index."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from tables import REFERENCE_DIR

from hudi_ds import HudiTable
from hudi_ds.errors import ConfigError, CorruptTableError
from hudi_ds.metadata import records as md

REFERENCE = "mor_avro_v9_txns_simple_overwrite"
# (hudi_ds writes no footer statistics of the record key column, so its base files get no column_stats of it)
LISTED = ["_hoodie_commit_time", "txn_id", "amount", "txn_date", "region"]
STATS_ON = {"hoodie.metadata.index.column.stats.enable": "true",
            "hoodie.metadata.index.partition.stats.enable": "true"}


def index_defs(table: Path) -> Path:
    return table / ".hoodie" / ".index_defs" / "index.json"


def copy_listing(tmp_path: Path, columns: list[str]) -> Path:
    """A copy of the reference table whose column_stats definition lists `columns`."""
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / REFERENCE, copy, copy_function=shutil.copyfile)
    defs = json.loads(index_defs(copy).read_text())
    defs["indexDefinitions"]["column_stats"]["sourceFields"] = columns
    index_defs(copy).write_text(json.dumps(defs))
    return copy


def stats(path: Path, partition: str) -> dict[str, dict[str, md.ColumnStats]]:
    return HudiTable(str(path))._read(lambda snap: snap.index_stats(partition, None))


def test_an_upsert_indexes_the_columns_the_definition_lists(tmp_path):
    copy = copy_listing(tmp_path, [*LISTED, "no_such_column"])
    before = stats(copy, md.COLUMN_STATS)
    rows = HudiTable(str(copy)).to_arrow()
    new = rows.drop_columns([c for c in rows.column_names if c.startswith("_hoodie_")]).slice(0, 3)
    new = new.set_column(new.schema.get_field_index("txn_id"), "txn_id",
                         pa.array([f"NEW-{i}" for i in range(new.num_rows)]))
    HudiTable(str(copy)).write(new, operation="upsert")
    after = stats(copy, md.COLUMN_STATS)
    added = set(after) - set(before)
    assert added
    for name in added:
        assert set(after[name]) == set(LISTED), name
    assert HudiTable(str(copy)).to_arrow().num_rows == rows.num_rows + new.num_rows


def test_statistics_built_again_with_a_column_list_cover_those_columns(tmp_path):
    """Dropping column_stats removes its definition; building it again with the option indexes the listed columns
    of every committed file, in column_stats and partition_stats."""
    copy = copy_listing(tmp_path, LISTED)
    off = {k: "false" for k in STATS_ON}
    HudiTable(str(copy), options=off).write(HudiTable(str(copy)).to_arrow().slice(0, 0), operation="upsert")
    HudiTable(str(copy), options={**STATS_ON, COLUMN_LIST: "txn_id,amount,txn_date,region"}).write(
        HudiTable(str(copy)).to_arrow().slice(0, 0), operation="upsert")
    data = {"txn_id", "amount", "txn_date", "region"}
    for partition in (md.COLUMN_STATS, md.PARTITION_STATS):
        built = stats(copy, partition)
        assert built
        assert all(data <= set(columns) <= {*META, *data} for columns in built.values()), partition


def test_a_table_without_a_column_list_keeps_the_default_selection(tmp_path):
    copy = copy_listing(tmp_path, [])
    before = stats(copy, md.COLUMN_STATS)
    rows = HudiTable(str(copy)).to_arrow()
    new = rows.drop_columns([c for c in rows.column_names if c.startswith("_hoodie_")]).slice(0, 1)
    new = new.set_column(new.schema.get_field_index("txn_id"), "txn_id", pa.array(["NEW-0"]))
    HudiTable(str(copy)).write(new, operation="upsert")
    after = stats(copy, md.COLUMN_STATS)
    data_columns = set(new.column_names)
    assert set(after) - set(before)
    assert all(set(after[name]) >= data_columns for name in set(after) - set(before))


@pytest.mark.parametrize(("content", "problem"), [("{not json", "not Hudi's JSON"),
                                                  ('{"indexDefinitions": []}', "not Hudi's JSON"),
                                                  ('{"indexDefinitions": {"column_stats": {"sourceFields": "a"}}}',
                                                   "not a list of column names")])
def test_a_corrupt_definitions_file_is_named_and_nothing_is_written(tmp_path, content, problem):
    copy = copy_listing(tmp_path, LISTED)
    index_defs(copy).write_text(content)
    rows = HudiTable(str(copy)).to_arrow()
    before = [i.requested_time for i in HudiTable(str(copy)).timeline()]
    with pytest.raises(CorruptTableError, match=problem) as e:
        HudiTable(str(copy)).write(rows.slice(0, 1), operation="upsert")
    assert ".hoodie/.index_defs/index.json" in str(e.value)
    assert [i.requested_time for i in HudiTable(str(copy)).timeline()] == before
    assert HudiTable(str(copy)).to_arrow().num_rows == rows.num_rows


def test_a_definitions_path_outside_the_table_is_refused(tmp_path):
    copy = copy_listing(tmp_path, LISTED)
    props = copy / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.index.defs.path=.hoodie/.index_defs/index.json",
                                               "hoodie.table.index.defs.path=../elsewhere/index.json"))
    rows = HudiTable(str(copy)).to_arrow()
    with pytest.raises(CorruptTableError, match="refusing path '../elsewhere/index.json'"):
        HudiTable(str(copy)).write(rows.slice(0, 1), operation="upsert")


# ---- hoodie.metadata.index.column.stats.column.list -------------------------------------------------------------

COLUMN_LIST = "hoodie.metadata.index.column.stats.column.list"
OURS = {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true", **STATS_ON, "hoodie.index.type": "SIMPLE",
        "hoodie.parquet.small.file.limit": "0"}
META = ["_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key"]


def batch(ids: list[int]) -> pa.Table:
    return pa.table({"id": ids, "part": ["p"] * len(ids), "ts": [1] * len(ids), "name": [f"n{i}" for i in ids],
                     "score": [i / 3 for i in ids]})


def definition(table: Path) -> dict[str, object]:
    return json.loads(index_defs(table).read_text())["indexDefinitions"]


@pytest.mark.parametrize("version", [9, 8])
def test_the_column_list_is_recorded_and_indexed(tmp_path, version):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="part",
                         options={**OURS, "hoodie.write.table.version": str(version), COLUMN_LIST: "score, id"})
    t.write(batch(list(range(10))), operation="bulk_insert")
    assert "hoodie.table.index.defs.path=.hoodie/.index_defs/index.json" in \
        (path / ".hoodie" / "hoodie.properties").read_text()
    recorded = definition(path)["column_stats"]
    assert recorded["sourceFields"] == [*META, "score", "id"]
    assert ("version" in recorded) == (version == 9)
    HudiTable(str(path)).write(batch(list(range(10, 20))), operation="bulk_insert")  # the recorded list, unset
    for partition in (md.COLUMN_STATS, md.PARTITION_STATS):
        for columns in stats(path, partition).values():
            assert {"score", "id"} <= set(columns) <= {*META, "score", "id"}, partition
    filtered = HudiTable(str(path)).to_arrow(filters=[("score", ">", 5.0)])
    assert sorted(filtered["id"].to_pylist()) == list(range(16, 20))


def test_another_list_changes_what_the_next_files_index(tmp_path):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="part",
                         options={**OURS, COLUMN_LIST: "score"})
    t.write(batch(list(range(10))), operation="bulk_insert")
    first = stats(path, md.COLUMN_STATS)
    HudiTable(str(path), options={COLUMN_LIST: "name"}).write(batch(list(range(10, 20))), operation="bulk_insert")
    assert definition(path)["column_stats"]["sourceFields"] == [*META, "name"]
    after = stats(path, md.COLUMN_STATS)
    assert all("score" in after[name] and "name" not in after[name] for name in first)
    assert all("name" in after[name] and "score" not in after[name] for name in set(after) - set(first))
    got = HudiTable(str(path)).to_arrow(filters=[("name", "=", "n3")])
    assert got["id"].to_pylist() == [3]


def test_an_unknown_column_is_refused_and_nothing_is_written(tmp_path):
    copy = copy_listing(tmp_path, LISTED)
    before = index_defs(copy).read_text()
    rows = HudiTable(str(copy)).to_arrow()
    with pytest.raises(ConfigError, match="no_such_column"):
        HudiTable(str(copy), options={COLUMN_LIST: "amount,no_such_column"}).write(rows.slice(0, 1))
    assert index_defs(copy).read_text() == before
    assert HudiTable(str(copy)).to_arrow().num_rows == rows.num_rows


def test_dropping_column_stats_removes_its_definition(tmp_path):
    copy = copy_listing(tmp_path, LISTED)
    HudiTable(str(copy), options={k: "false" for k in STATS_ON}).write(
        HudiTable(str(copy)).to_arrow().slice(0, 0), operation="upsert")
    assert set(definition(copy)) == {"record_index"}


# ---- the record index's definition ------------------------------------------------------------------------------

RECORD_INDEX_ON = {"hoodie.metadata.enable": "true", "hoodie.metadata.record.index.enable": "true"}


@pytest.mark.parametrize("version", [9, 8])
def test_the_record_index_definition_follows_the_record_index(tmp_path, version):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="part",
                         options={"hoodie.write.table.version": str(version), **RECORD_INDEX_ON})
    t.write(batch(list(range(10))))
    if version == 8:  # Hudi 1.0 recorded no record index definition
        assert not index_defs(path).exists()
        return
    assert definition(path)["record_index"] == {
        "indexName": "record_index", "indexType": "record_index", "indexFunction": "", "sourceFields": [],
        "indexOptions": {"isPartitioned": "false"}, "version": "V1"}
    HudiTable(str(path), options={"hoodie.metadata.record.index.enable": "false"}).write(batch([11]))
    assert "record_index" not in definition(path)
    HudiTable(str(path), options={"hoodie.metadata.record.index.enable": "true"}).write(batch([12]))
    assert "record_index" in definition(path)
    assert sorted(HudiTable(str(path)).to_arrow()["id"].to_pylist()) == [*range(10), 11, 12]


def test_dropping_the_record_index_of_a_hudi_table_keeps_the_other_definitions(tmp_path):
    copy = copy_listing(tmp_path, LISTED)
    HudiTable(str(copy), options={"hoodie.metadata.record.index.enable": "false"}).write(
        HudiTable(str(copy)).to_arrow().slice(0, 0), operation="upsert")
    assert set(definition(copy)) == {"column_stats"}
    assert definition(copy)["column_stats"]["sourceFields"] == LISTED
