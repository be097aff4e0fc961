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
from hudi_ds.errors import CorruptTableError
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


def test_rebuilt_statistics_cover_the_listed_columns(tmp_path):
    copy = copy_listing(tmp_path, LISTED)
    off = {k: "false" for k in STATS_ON}
    HudiTable(str(copy), options=off).write(HudiTable(str(copy)).to_arrow().slice(0, 0), operation="upsert")
    HudiTable(str(copy), options=STATS_ON).write(HudiTable(str(copy)).to_arrow().slice(0, 0), operation="upsert")
    for partition in (md.COLUMN_STATS, md.PARTITION_STATS):
        built = stats(copy, partition)
        assert built
        assert all(set(columns) == set(LISTED) for columns in built.values()), partition


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
    with pytest.raises(CorruptTableError, match=problem) as e:
        HudiTable(str(copy)).write(rows.slice(0, 1), operation="upsert")
    assert ".hoodie/.index_defs/index.json" in str(e.value)
    assert HudiTable(str(copy)).to_arrow().num_rows == rows.num_rows


def test_a_definitions_path_outside_the_table_is_refused(tmp_path):
    copy = copy_listing(tmp_path, LISTED)
    props = copy / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text().replace("hoodie.table.index.defs.path=.hoodie/.index_defs/index.json",
                                               "hoodie.table.index.defs.path=../elsewhere/index.json"))
    rows = HudiTable(str(copy)).to_arrow()
    with pytest.raises(CorruptTableError, match="refusing path '../elsewhere/index.json'"):
        HudiTable(str(copy)).write(rows.slice(0, 1), operation="upsert")
