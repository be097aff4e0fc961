"""Writes with Apache Hudi's SIMPLE, BLOOM, GLOBAL_SIMPLE and GLOBAL_BLOOM indexes (hoodie.index.type), through
HudiTable: random histories equal a dict model and hudi-rs, copies of the tables Apache Hudi wrote take upserts and
deletes, small files fill up, the global index moves a key between partitions, and base files carry the bloom
filters Hudi's bloom index reads."""

from __future__ import annotations

import shutil
import time
from dataclasses import replace
from pathlib import Path
from typing import Any
from unittest.mock import patch

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import (
    CommitConflictError,
    ConfigError,
    HudiTable,
    InvalidDataError,
    TableExistsError,
    UnsupportedTableError,
)
from hudi_ds.cli.validate import validate
from hudi_ds.files.base_file import bloom_footer
from hudi_ds.hfile.bloom import BloomFilter
from hudi_ds.index import bloom_lookup, lookup
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.routing import latest_per_key
from hudi_ds.write.task import TaskWriter

KEY, FILE, PART = "_hoodie_record_key", "_hoodie_file_name", "_hoodie_partition_path"


def create(path: Path, table_type: str, version: int, index: str, **options: Any) -> HudiTable:
    return HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type=table_type, options={"hoodie.index.type": index,
                                                            "hoodie.write.table.version": version,
                                                            "compaction.schedule.enabled": "false", **options})


def file_ids(t: HudiTable) -> dict[tuple[str, str], str]:
    """(partition, key) -> the file group holding it."""
    read = t.to_arrow(columns=[KEY, PART, FILE]).to_pylist()
    return {(r[PART], r[KEY]): r[FILE].split("_")[0] for r in read}


def group_count(path: Path) -> int:
    return len({p.name.split("_")[0] for p in path.rglob("*.parquet") if ".hoodie" not in p.parts})


# ---- random histories ----------------------------------------------------------------------------------------

OP = st.tuples(st.sampled_from(["upsert", "delete"]),
               st.lists(st.tuples(st.integers(0, 11), st.sampled_from(["d1", "d2"]), st.integers(0, 99)),
                        min_size=1, max_size=8))
# small sizes, so that writes fill small files and open new file groups
SIZING = st.sampled_from([{}, {"hoodie.parquet.small.file.limit": "2500", "hoodie.parquet.max.file.size": "4000",
                               "hoodie.copyonwrite.record.size.estimate": "400"},
                          {"hoodie.parquet.small.file.limit": "0", "hoodie.copyonwrite.insert.split.size": "2",
                           "hoodie.copyonwrite.insert.auto.split": "false"}])


def apply(model: dict[Any, dict[str, Any]], op: str, batch: list[dict[str, Any]], global_index: bool) -> None:
    """The latest version of each key wins (ordering values rise from batch to batch); a global index holds a key
    once in the table, in the partition its latest version names."""
    latest: dict[Any, dict[str, Any]] = {}
    for r in batch:
        ident = r["id"] if global_index else (r["dt"], r["id"])
        if ident not in latest or r["ts"] >= latest[ident]["ts"]:
            latest[ident] = r
    for ident, r in latest.items():
        if op == "delete":
            model.pop(ident, None)
        else:
            model[ident] = r


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "RECORD_INDEX"])
@settings(max_examples=8, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=st.lists(OP, min_size=1, max_size=5), sizing=SIZING)
def test_any_history_reads_back_as_the_model_and_in_hudi_rs(tmp_path_factory, table_type, version, index, history,
                                                             sizing):
    if index == "RECORD_INDEX" and version == 6:
        pytest.skip("the record index lives in the metadata table, which version 8/9 tables have")
    path = tmp_path_factory.mktemp("t")
    t = create(path, table_type, version, index, **sizing)
    global_index = index.startswith("GLOBAL_") or index == "RECORD_INDEX"  # RECORD_INDEX keeps a key where it is
    model: dict[Any, dict[str, Any]] = {}
    for n, (op, batch) in enumerate(history):
        data = [{"id": f"k{k}", "dt": dt, "ts": n * 100 + ts, "v": f"{n}.{ts}"} for k, dt, ts in batch]
        held = file_ids(t)
        # a global index filters the table's keys to the written ones a few slices at a time: every few keys here
        with patch.object(lookup, "FILTER_BATCH_ROWS", 3):
            t.write(pa.Table.from_pylist(data), operation=op)
        apply(model, op, data, global_index)
        now = file_ids(t)
        assert {k: g for k, g in now.items() if k in held} == {k: held[k] for k in now if k in held}, \
            "an updated key left the file group that held it"
    ours = t.to_arrow(columns=["id", "dt", "ts", "v"])
    expected = sorted(((r["id"], r["dt"], r["ts"], r["v"]) for r in model.values()), key=repr)
    assert rows(ours, ["id", "dt", "ts", "v"]) == expected
    keys = ours["id"].to_pylist() if global_index else list(zip(ours["dt"].to_pylist(), ours["id"].to_pylist(),
                                                                 strict=True))
    assert len(keys) == len(set(keys))
    if expected:
        assert rows(hudi_rs(str(path)), ["id", "dt", "ts", "v"]) == expected


# ---- tables Apache Hudi wrote ------------------------------------------------------------------------------------

WRITABLE = ["cow_v6_simplekeygen_nonhivestyle", "cow_v6_complexkeygen_hivestyle", "cow_v6_nonpartitioned",
            "cow_v8_simplekeygen_nonhivestyle", "cow_v8_complexkeygen_hivestyle", "cow_v8_nonpartitioned",
            "cow_v6_simplekeygen_hivestyle_no_metafields", "cow_v8_simplekeygen_hivestyle_no_metafields",
            "mor_parquet_v6_simplekeygen_nonhivestyle", "mor_parquet_v6_complexkeygen_hivestyle",
            "mor_parquet_v6_nonpartitioned", "quickstart_mor_avro_v6_trips_8i1u", "quickstart_mor_avro_v6_trips_8i3d",
            "cow_v6_timebasedkeygen_nonhivestyle",
            "mor_avro_v9_txns_simple_overwrite",  # its metadata table: files, column/partition stats, record index
            "cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta"]  # and two secondary indexes
# settings a table's writers had that its hoodie.properties lacks (the SQL that made it set them as table properties)
WRITER_OPTIONS = {"cow_v6_timebasedkeygen_nonhivestyle": {"hoodie.keygen.timebased.timestamp.type": "DATE_STRING"}}


@pytest.mark.parametrize("name", WRITABLE)
def test_a_table_apache_hudi_wrote_takes_upserts_and_deletes(reference_dir, tmp_path, name):
    """Upsert of an existing and a new key, then a delete: our reader and hudi-rs agree with the rows updated
    by a model, no key is held twice, and the updated key stays in its file group."""
    path = tmp_path / name
    shutil.copytree(reference_dir / name, path)
    t = HudiTable(str(path), options=WRITER_OPTIONS.get(name))
    keys = t.config.record_key_fields
    ordering = t.config.ordering_field
    before = t.to_arrow()
    data_columns = [c for c in before.column_names if not c.startswith("_hoodie")]
    old = before.slice(0, 2).to_pylist()
    changed, removed = old[0], old[1]
    groups = file_ids(t)
    update = {c: changed[c] for c in data_columns}
    update[ordering] = update[ordering] + 1 if isinstance(update[ordering], int) else update[ordering]
    fresh = dict(update)
    for k in keys:
        fresh[k] = fresh[k] + 1000 if isinstance(fresh[k], int) else f"new-{fresh[k]}"
    t.write(pa.Table.from_pylist([update, fresh], schema=t.schema))
    t.write(pa.Table.from_pylist([{c: removed[c] for c in data_columns}], schema=t.schema), operation="delete")

    after = t.to_arrow()
    ident = [PART, *keys]
    expected = {tuple(r[c] for c in ident): {c: r[c] for c in data_columns} for r in before.to_pylist()}
    del expected[tuple(removed[c] for c in ident)]
    expected[tuple(changed[c] for c in ident)] = update
    new_partition = next(r[PART] for r in after.to_pylist() if all(r[k] == fresh[k] for k in keys))
    expected[(new_partition, *(fresh[k] for k in keys))] = fresh
    want = sorted((tuple(r[c] for c in data_columns) for r in expected.values()), key=repr)
    assert rows(after, data_columns) == want
    assert rows(hudi_rs(str(path)), data_columns) == want
    assert after.num_rows == len({tuple(r[c] for c in ident) for r in after.to_pylist()})
    assert file_ids(t)[(changed[PART], changed[KEY])] == groups[(changed[PART], changed[KEY])]
    if t.config.is_mor:  # the services work per file group, whatever placed the keys
        t.compact()
        assert rows(t.to_arrow(), data_columns) == want and rows(hudi_rs(str(path)), data_columns) == want
    report = validate(str(path))  # a metadata table Hudi wrote is kept in step (files, statistics, record index)
    assert report["ok"], report["errors"]


def test_a_merge_on_read_table_apache_hudi_wrote_upgrades_to_9_with_a_write(reference_dir, tmp_path):
    """The upgrade compacts the log files first (as Hudi's does), whatever index placed the keys."""
    path = tmp_path / "t"
    shutil.copytree(reference_dir / "mor_parquet_v6_simplekeygen_nonhivestyle", path)
    before = HudiTable(str(path)).to_arrow()
    data_columns = [c for c in before.column_names if not c.startswith("_hoodie")]
    row = before.select(data_columns).slice(0, 1)
    t = HudiTable(str(path), options={"hoodie.write.table.version": "9"})
    t.write(row)
    assert HudiTable(str(path)).config.version == 9
    want = rows(before, data_columns)
    assert rows(HudiTable(str(path)).to_arrow(), data_columns) == want == rows(hudi_rs(str(path)), data_columns)


@pytest.mark.parametrize("name,error,reason", [
    ("mor_parquet_v6_simplekeygen_hivestyle_no_metafields", UnsupportedTableError, "populate.meta.fields=false"),
    # the epoch-millis partition column reads back as the string Hudi's SQL UPDATE left it (hudi-rs gives it too),
    # which the timestamp key generator refuses as Hudi's does, naming the way out: integers, which the table
    # takes (tests/test_type_promotion.py)
    ("cow_v9_timebasedkeygen_epochmillis", InvalidDataError, "holds text.*give the instant as an integer column"),
])
def test_tables_whose_keys_a_write_could_not_keep_are_refused(reference_dir, tmp_path, name, error, reason):
    path = tmp_path / name
    shutil.copytree(reference_dir / name, path)
    t = HudiTable(str(path))
    before = t.to_arrow()
    with pytest.raises(error, match=reason):
        t.write(before.drop_columns([c for c in before.column_names if c.startswith("_hoodie")]).slice(0, 1))
    assert t.to_arrow().num_rows == before.num_rows


# ---- sizing, moves, settings -------------------------------------------------------------------------------------

def batch(ids: list[str], ts: int, dt: str = "d1") -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "dt": [dt] * len(ids), "v": [f"{i}@{ts}" for i in ids]})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_new_keys_fill_small_files_before_new_file_groups(tmp_path, table_type):
    # records of ~1 KB (the estimate: no commit is large enough to measure), 5 KB files: 5 records each
    # merge-on-read fills as many small files as copy-on-write only with a candidates limit to match
    t = create(tmp_path / "t", table_type, 6, "SIMPLE", **{"hoodie.parquet.max.file.size": "5120",
                                                           "hoodie.record.size.estimation.threshold": "1e9",
                                                           "hoodie.merge.small.file.group.candidates.limit": "3"})
    t.write(batch([f"a{i}" for i in range(12)], 1))
    assert group_count(tmp_path / "t") == 3  # 12 records: three file groups of 4 each (spread evenly)
    t.write(batch(["b1", "b2", "b3"], 2))  # the first small file has room for 5 - (its bytes / 1 KB) records
    assert group_count(tmp_path / "t") == 3
    t.write(batch([f"c{i}" for i in range(40)], 3))
    assert group_count(tmp_path / "t") > 3
    assert t.to_arrow().num_rows == 55 and hudi_rs(str(tmp_path / "t")).num_rows == 55


@pytest.mark.parametrize("version", [6, 9])
@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_merge_on_read_fills_only_its_smallest_small_file(tmp_path, table_type, version):
    """Hudi's SparkUpsertDeltaCommitPartitioner: hoodie.merge.small.file.group.candidates.limit (1) small files of a
    partition, the smallest first, take new keys; copy-on-write's UpsertPartitioner fills them in the file view's
    order, with no limit."""
    path = tmp_path / "t"
    sizing = {"hoodie.parquet.max.file.size": "5120", "hoodie.record.size.estimation.threshold": "1e9"}
    t = create(path, table_type, version, "SIMPLE", **sizing)
    long_first = [f"{i}@1" * (400 if i < 4 else 1) for i in range(12)]  # the first group's file is the largest
    t.write(pa.table({"id": [f"a{i:02}" for i in range(12)], "ts": [1] * 12, "dt": ["d1"] * 12, "v": long_first}))
    groups = file_ids(t)
    sizes = {p.name.split("_")[0]: p.stat().st_size for p in (path / "d1").glob("*.parquet")}
    assert len(sizes) == 3
    roomy = {**sizing, "hoodie.parquet.max.file.size": "10000000"}  # every file has room for all new keys
    HudiTable(str(path), options=roomy).write(batch(["b1", "b2", "b3"], 2))
    filled = {f for (_, k), f in file_ids(HudiTable(str(path))).items() if k.startswith("b")}
    smallest = min(sizes, key=lambda f: sizes[f])
    assert groups[("d1", "a00")] != smallest
    assert len(filled) == 1 and (table_type == "COPY_ON_WRITE" or filled == {smallest})
    HudiTable(str(path), options={**roomy, "hoodie.merge.small.file.group.candidates.limit": "0"}).write(
        batch(["c1"], 3))
    assert group_count(path) == (3 if table_type == "COPY_ON_WRITE" else 4)  # 0: no small file on merge-on-read
    expected = sorted([(f"a{i:02}", v) for i, v in enumerate(long_first)]
                      + [("b1", "b1@2"), ("b2", "b2@2"), ("b3", "b3@2"), ("c1", "c1@3")], key=repr)
    assert rows(HudiTable(str(path)).to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(str(path)), ["id", "v"])


def test_compaction_cleaning_and_archiving_keep_a_lookup_index_table(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", 9, "SIMPLE", **{
        "compaction.schedule.enabled": "true", "compaction.delta_commits": "2", "hoodie.parquet.small.file.limit": "0",
        "hoodie.clean.commits.retained": "1", "hoodie.keep.min.commits": "2", "hoodie.keep.max.commits": "3"})
    for n in range(6):
        t.write(batch(["a", "b", f"n{n}"], n))
    actions = {i.action for i in t.timeline()}
    assert "commit" in actions and "clean" in actions  # compacted and cleaned
    expected = sorted([("a", "a@5"), ("b", "b@5")] + [(f"n{n}", f"n{n}@{n}") for n in range(6)], key=repr)
    assert rows(t.to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(str(tmp_path / "t")), ["id", "v"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_every_operation_on_a_lookup_index_table(tmp_path, table_type):
    """insert and bulk_insert look keys up as upsert does (no key twice); the overwrites replace file groups;
    a table without a record key appends."""
    path = tmp_path / "t"
    t = create(path, table_type, 6, "SIMPLE")
    t.write(batch(["a", "b"], 1))
    t.write(batch(["a", "c"], 2), operation="insert")
    t.write(batch(["a", "d"], 3), operation="bulk_insert")
    assert rows(t.to_arrow(), ["id", "v"]) == [("a", "a@3"), ("b", "b@1"), ("c", "c@2"), ("d", "d@3")]
    t.write(batch(["x"], 4), operation="insert_overwrite")
    t.write(batch(["y"], 5, "d2"))
    assert rows(t.to_arrow(), ["id"]) == [("x",), ("y",)] == rows(hudi_rs(str(path)), ["id"])
    t.write(batch(["z"], 6, "d3"), operation="insert_overwrite_table")
    assert rows(t.to_arrow(), ["id"]) == [("z",)] == rows(hudi_rs(str(path)), ["id"])
    keyless = HudiTable.create(str(tmp_path / "k"), table_name="k", partition_by="dt", table_type=table_type,
                               options={"hoodie.index.type": "SIMPLE"})
    keyless.write(batch(["a"], 1))
    keyless.write(batch(["a"], 1))
    assert rows(keyless.to_arrow(), ["id"]) == [("a",), ("a",)] == rows(hudi_rs(str(tmp_path / "k")), ["id"])


def test_a_small_merge_on_read_file_with_log_files_takes_no_new_keys(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", 9, "SIMPLE")
    t.write(batch(["a", "b"], 1))
    t.write(batch(["a"], 2))  # a log file: the slice is no small file any more (Hudi's rule)
    t.write(batch(["c"], 3))
    assert group_count(tmp_path / "t") == 2
    assert rows(t.to_arrow(), ["id", "v"]) == [("a", "a@2"), ("b", "b@1"), ("c", "c@3")]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_global_index_moves_a_key_to_its_new_partition(tmp_path, table_type):
    t = create(tmp_path / "t", table_type, 9, "GLOBAL_SIMPLE")
    t.write(batch(["a", "b"], 5))
    t.write(batch(["a"], 6, "d2"))
    t.write(batch(["b"], 4, "d2"))  # older than the row held in d1: the merge keeps that one, where it is
    read = sorted((r["id"], r[PART], r["v"]) for r in t.to_arrow(columns=["id", "v", PART]).to_pylist())
    assert read == [("a", "d2", "a@6"), ("b", "d1", "b@5")]
    t.write(batch(["a"], 7, "d1"), operation="delete")  # a global delete finds the key in d2
    assert rows(t.to_arrow(), ["id"]) == [("b",)] and rows(hudi_rs(str(tmp_path / "t")), ["id"]) == [("b",)]


def test_without_update_partition_path_a_key_stays_where_it_is(tmp_path):
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "GLOBAL_SIMPLE",
               **{"hoodie.simple.index.update.partition.path": "false"})
    t.write(batch(["a"], 1))
    t.write(batch(["a"], 2, "d2"))
    assert [(r["v"], r[PART]) for r in t.to_arrow(columns=["v", PART]).to_pylist()] == [("a@2", "d1")]


def test_the_simple_index_keeps_a_key_per_partition(tmp_path):
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "SIMPLE")
    t.write(batch(["a"], 1))
    t.write(batch(["a"], 2, "d2"))
    assert rows(t.to_arrow(), ["id", "dt"]) == [("a", "d1"), ("a", "d2")]


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_BLOOM"])
def test_versions_of_a_key_in_one_write_combine_by_the_partial_update_payload(tmp_path, table_type, index):
    """Hudi combines a write's versions of a key by the payload before tagging: under PartialUpdateAvroPayload a
    newer version's null cell keeps the older version's value, for a key already stored and for a new one."""
    t = create(tmp_path / "t", table_type, 6, index,
               **{"hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.PartialUpdateAvroPayload"})
    schema = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("x", pa.int64()), ("y", pa.int64()),
                        ("dt", pa.string())])
    t.write(pa.Table.from_pylist([{"id": "a", "ts": 1, "x": 1, "y": 1, "dt": "d1"}], schema=schema))
    t.write(pa.Table.from_pylist([{"id": k, "ts": ts, "x": x, "y": y, "dt": "d1"}
                                  for k in ("a", "b") for ts, x, y in ((3, None, 3), (2, 2, None))], schema=schema))
    expected = [("a", 3, 2, 3), ("b", 3, 2, 3)]
    assert rows(t.to_arrow(), ["id", "ts", "x", "y"]) == expected
    assert rows(hudi_rs(str(tmp_path / "t")), ["id", "ts", "x", "y"]) == expected


def test_a_delete_of_keys_the_table_does_not_hold_writes_nothing(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", 6, "SIMPLE")
    t.write(batch(["a"], 1))
    files = {p for p in (tmp_path / "t").rglob("*") if ".hoodie" not in p.parts}
    t.write(batch(["x"], 2), operation="delete")
    assert {p for p in (tmp_path / "t").rglob("*") if ".hoodie" not in p.parts} == files
    assert rows(t.to_arrow(), ["id"]) == [("a",)]


@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_BLOOM"])
def test_null_integer_keys_are_refused_before_a_file_is_written(tmp_path, index):
    # tagging matches integer keys by their column, without key strings: the null key is still refused first
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="MERGE_ON_READ", options={"hoodie.index.type": index})
    t.write(pa.table({"id": [1, 2], "ts": [1, 1], "dt": ["d1", "d2"]}))
    files = {p for p in (tmp_path / "t").rglob("*") if ".hoodie" not in p.parts}
    with pytest.raises(InvalidDataError, match="'id' is null or empty in 1 row"):
        t.write(pa.table({"id": [1, None, 3], "ts": [2, 2, 2], "dt": ["d1", "d1", "d2"]}))
    assert {p for p in (tmp_path / "t").rglob("*") if ".hoodie" not in p.parts} == files
    assert sorted(t.to_arrow(columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == [
        {"id": 1, "ts": 1}, {"id": 2, "ts": 1}]


@settings(max_examples=150, deadline=None)
@given(st.sampled_from([pa.int8(), pa.int32(), pa.int64()]).flatmap(lambda t: st.tuples(st.just(t), st.lists(
    st.tuples(st.integers(-128, 127) if t == pa.int8() else st.integers(-2**31, 2**31 - 1) if t == pa.int32()
              else st.one_of(st.integers(-2**63, 2**63 - 1), st.integers(-3, 3)), st.integers(0, 2)),
    min_size=1, max_size=40))))
def test_a_writes_versions_of_an_integer_key_combine_to_the_latest(typed_rows):
    # tagging combines a write's versions by the integer key column (distinct keys are told by a byte table
    # where the keys lie close together): the highest ordering value wins, ties to the later row
    key_type, versions = typed_rows
    table = pa.table({"id": pa.array([k for k, _ in versions], key_type), "ts": [o for _, o in versions],
                      "at": list(range(len(versions)))})
    expected: dict[int, tuple[int, int]] = {}
    for at, (k, o) in enumerate(versions):
        if k not in expected or o >= expected[k][0]:
            expected[k] = (o, at)
    got = latest_per_key(table, "ts", "id").to_pylist()
    assert sorted((r["id"], r["ts"], r["at"]) for r in got) == sorted((k, o, at) for k, (o, at) in expected.items())


def test_a_failed_write_tags_nothing_after_it_returns(tmp_path, monkeypatch):
    # partitions are tagged on threads ahead of the file writes: a write that fails stops them before it returns
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="MERGE_ON_READ", options={"hoodie.index.type": "SIMPLE"})
    parts = [f"d{i}" for i in range(12)]
    t.write(pa.table({"id": list(range(24)), "ts": [1] * 24, "dt": parts * 2}))
    tagged: list[str] = []
    tag_batch = TaskWriter._tag_batch

    def counted(self: TaskWriter, batch: list[str], threads: int) -> Any:
        time.sleep(0.1)  # a slow tagging still runs when the first write fails
        out = tag_batch(self, batch, threads)
        tagged.extend(batch)
        return out

    def failing(self: TaskWriter, key: Any, rows: pa.Table) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(TaskWriter, "_tag_batch", counted)
    monkeypatch.setattr(TaskWriter, "_write_group", failing)
    with pytest.raises(OSError, match="disk full"):
        t.write(pa.table({"id": list(range(24)), "ts": [2] * 24, "dt": parts * 2}))
    done = list(tagged)
    time.sleep(0.3)
    assert tagged == done and len(done) < len(parts)
    monkeypatch.undo()
    assert sorted(r["ts"] for r in t.to_arrow(columns=["ts"]).to_pylist()) == [1] * 24


def test_creation_records_the_index_and_checks_it(tmp_path):
    create(tmp_path / "t", "COPY_ON_WRITE", 6, "SIMPLE")
    props = (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.index.type=SIMPLE" in props and "num.buckets" not in props
    with pytest.raises(TableExistsError, match="GLOBAL_SIMPLE.*records 'SIMPLE'"):
        HudiTable(str(tmp_path / "t"), options={"hoodie.index.type": "GLOBAL_SIMPLE"}).write(batch(["a"], 1))
    with pytest.raises(ConfigError, match="bucket index.*SIMPLE"):
        HudiTable.create(str(tmp_path / "u"), table_name="u", record_key="id", buckets=4,
                         options={"hoodie.index.type": "SIMPLE"})
    with pytest.raises(ConfigError, match="HBASE index: it lives in an external HBase table"):
        HudiTable.create(str(tmp_path / "v"), table_name="v", record_key="id", options={"hoodie.index.type": "hbase"})
    with pytest.raises(ConfigError, match="metadata table of version 8 and 9 tables"):
        create(tmp_path / "w", "COPY_ON_WRITE", 6, "RECORD_INDEX")
    with pytest.raises(ConfigError, match="not valid"):
        HudiTable(str(tmp_path / "t"), options={"hoodie.index.type": "NO_SUCH_INDEX"})


def test_a_table_that_records_no_index_is_written_with_the_named_one_else_simple(reference_dir, tmp_path):
    path = tmp_path / "t"
    shutil.copytree(reference_dir / "cow_v6_nonpartitioned", path)
    t = HudiTable(str(path))
    row = t.to_arrow().drop_columns([c for c in t.to_arrow().column_names if c.startswith("_hoodie")]).slice(0, 1)
    plan = Coordinator(t.storage, t.config).begin("upsert", t.schema)
    assert plan.lookup is not None and not plan.lookup.global_index  # SIMPLE, Hudi's Spark default
    Coordinator(t.storage, t.config).abort(plan)
    HudiTable(str(path), options={"hoodie.index.type": "GLOBAL_SIMPLE"}).write(row)
    with pytest.raises(UnsupportedTableError, match="no bucket count"):
        HudiTable(str(path), options={"hoodie.index.type": "BUCKET"}).write(row)


@pytest.mark.parametrize("index,other_partition,conflicts", [("SIMPLE", "d2", False), ("SIMPLE", "d1", True),
                                                              ("GLOBAL_BLOOM", "d2", True)])
def test_two_writers_inserting_into_one_partition_conflict(tmp_path, index, other_partition, conflicts):
    """Both might insert one key into two file groups: the later commit fails, safe to retry."""
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, index)
    t.write(batch(["a"], 1))
    plans = [Coordinator(t.storage, t.config).begin("upsert", t.schema) for _ in range(2)]
    results = []
    for plan, dt in zip(plans, ["d1", other_partition], strict=True):
        task = TaskWriter(plan)
        task.write(batch(["n"], 2, dt))
        results.append(task.finish())
    Coordinator(t.storage, t.config).commit(plans[0], [results[0]])
    if conflicts:
        with pytest.raises(CommitConflictError, match="safe to retry"):
            Coordinator(t.storage, t.config).commit(plans[1], [results[1]])
    else:
        Coordinator(t.storage, t.config).commit(plans[1], [results[1]])
    ids = [r["id"] for r in t.to_arrow(columns=["id"]).to_pylist()]
    assert sorted(ids) == (["a", "n"] if conflicts else ["a", "n", "n"])


@pytest.mark.parametrize("prefixed", [False, True])
def test_one_field_complex_keys_are_written_in_the_form_the_table_holds(tmp_path, prefixed):
    """ComplexKeyGenerator with one key field (one key, two partition fields): Hudi 0.14.0 and 1.1 write
    `id:value`, 0.14.1-1.0.2 the bare value; later writes follow the keys the table's files hold."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by=["dt", "h"], table_type="COPY_ON_WRITE", options={"hoodie.index.type": "SIMPLE"})
    assert t.config.key_generator.endswith("ComplexKeyGenerator")
    first = batch(["a", "b"], 1).append_column("h", pa.array(["0", "0"]))
    plan = Coordinator(t.storage, t.config).begin("upsert", first.schema)
    plan = replace(plan, prefixed_keys=prefixed)  # the first writer's key form (another engine's)
    task = TaskWriter(plan)
    task.write(first)
    Coordinator(t.storage, t.config).commit(plan, [task.finish()])
    t.write(batch(["a", "c"], 2).append_column("h", pa.array(["0", "0"])))
    read = t.to_arrow(columns=["id", "v", KEY])
    form = (lambda k: f"id:{k}") if prefixed else (lambda k: k)
    assert rows(read, ["id", "v", KEY]) == [("a", "a@2", form("a")), ("b", "b@1", form("b")), ("c", "c@2", form("c"))]


def test_a_new_key_in_two_tasks_of_one_write_is_refused(tmp_path):
    """Spark hands a write its partitions as they are: each task places its own new keys, so one new key in two
    tasks would land in two file groups; the commit refuses it and leaves nothing behind."""
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "SIMPLE")
    t.write(batch(["a"], 1))
    before = {p for p in (tmp_path / "t").rglob("*") if ".hoodie" not in p.parts}
    coordinator = Coordinator(t.storage, t.config)
    plan = coordinator.begin("upsert", t.schema)
    results = []
    for task_id in (0, 1):
        task = TaskWriter(plan, task_id)
        task.write(batch(["a", "n"], 2 + task_id))
        results.append(task.finish())
    with pytest.raises(InvalidDataError, match="1 new record key.*'n'.*several Spark partitions"):
        coordinator.commit(plan, results)
    assert {p for p in (tmp_path / "t").rglob("*") if ".hoodie" not in p.parts} == before
    assert rows(t.to_arrow(), ["id", "v"]) == [("a", "a@1")]



def write_tasks(t: HudiTable, parts: list[pa.Table], operation: str = "upsert") -> None:
    """One write whose task i gets parts[i] (Spark's partitions of the input, as they come)."""
    coordinator = Coordinator(t.storage, t.config)
    plan = coordinator.begin(operation, t.schema if t.timeline() else parts[0].schema)
    results = []
    for task_id, part in enumerate(parts):
        task = TaskWriter(plan, task_id)
        task.write(part)
        results.append(task.finish())
    coordinator.commit(plan, results)


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("operation", ["upsert", "insert", "bulk_insert"])
def test_each_task_writes_its_new_keys_into_file_groups_of_its_own(tmp_path, table_type, operation):
    """Tasks number their new file groups from the same slot, but each group is one task's, with its own random id
    (as Apache Hudi's tasks name theirs): no new key lands in a log of a group another task created."""
    path = tmp_path / "t"
    t = create(path, table_type, 6, "SIMPLE", **{"hoodie.parquet.small.file.limit": "0"})
    parts = [batch([f"t{task}k{i}" for i in range(3)], 1) for task in range(3)]
    write_tasks(t, parts, operation)
    assert not list(path.rglob("*.log.*")) and group_count(path) == 3
    owners = {(file_id, key[:2]) for (_, key), file_id in file_ids(t).items()}
    assert len(owners) == 3 and len({file_id for file_id, _ in owners}) == 3  # one task's keys per group
    expected = sorted(((k, f"{k}@1") for part in parts for k in part["id"].to_pylist()), key=repr)
    assert rows(t.to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(str(path)), ["id", "v"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_one_task_fills_a_small_file_the_others_make_new_file_groups(tmp_path, table_type):
    """Apache Hudi gives a small file to one task: here the first task to claim it; the other task's new keys go
    to a new file group of its own, not into logs of the rewritten one, nor into rows the coordinator merges."""
    path = tmp_path / "t"
    t = create(path, table_type, 6, "SIMPLE")
    t.write(batch(["a"], 1))
    write_tasks(t, [batch(["m", "n"], 2), batch(["x", "y"], 2)])
    assert not list(path.rglob("*.log.*")) and group_count(path) == 2
    held = file_ids(t)
    assert held[("d1", "a")] == held[("d1", "m")] == held[("d1", "n")] != held[("d1", "x")] == held[("d1", "y")]
    expected = [("a", "a@1"), ("m", "m@2"), ("n", "n@2"), ("x", "x@2"), ("y", "y@2")]
    assert rows(t.to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(str(path)), ["id", "v"])

@pytest.mark.parametrize("version", [6, 9])
def test_an_update_beside_another_tasks_filling_of_the_small_file_is_kept(tmp_path, version):
    """One task fills the small file holding `a` (it rewrites the base file: a new slice), another updates `a` in a
    log file: the log belongs to the new slice, also in version 6, whose log files name their slice's instant."""
    path = tmp_path / "t"
    t = create(path, "MERGE_ON_READ", version, "SIMPLE")
    t.write(batch(["a", "b"], 1))
    write_tasks(t, [batch(["n"], 2), batch(["a"], 2)])
    expected = [("a", "a@2"), ("b", "b@1"), ("n", "n@2")]
    assert rows(t.to_arrow(), ["id", "v"]) == expected == rows(hudi_rs(str(path)), ["id", "v"])
    assert group_count(path) == 1

# ---- bloom filters -----------------------------------------------------------------------------------------------

def footers(path: Path) -> dict[str, dict[bytes, bytes]]:
    return {p.name: pq.read_metadata(p).metadata for p in path.rglob("*.parquet") if ".hoodie" not in p.parts}


def test_our_bloom_footer_is_the_one_apache_hudi_writes_for_the_same_keys(reference_dir):
    checked = 0
    for name in ("cow_v6_simplekeygen_nonhivestyle", "cow_v8_complexkeygen_hivestyle", "mor_parquet_v6_nonpartitioned"):
        for p in (reference_dir / name).rglob("*.parquet"):
            theirs = pq.read_metadata(p).metadata
            keys = pq.read_table(p, columns=[KEY])[KEY]
            ours = bloom_footer(keys)
            assert ours["org.apache.hudi.bloomfilter"].encode() == theirs[b"org.apache.hudi.bloomfilter"]
            assert ours["hoodie_bloom_filter_type_code"].encode() == theirs[b"hoodie_bloom_filter_type_code"]
            checked += 1
    assert checked >= 5


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_bloom_index_base_files_carry_the_filter_of_their_keys(tmp_path, table_type):
    path = tmp_path / "t"
    t = create(path, table_type, 9, "GLOBAL_BLOOM", **{"compaction.schedule.enabled": "true",
                                                      "compaction.delta_commits": "2"})
    for n in range(4):
        t.write(batch([f"k{i}" for i in range(n, n + 30)], n, f"d{n % 2}"))
    assert rows(t.to_arrow(), ["id"]) == sorted((f"k{i}",) for i in range(33))
    for name, meta in footers(path).items():
        [file] = list(path.rglob(name))
        keys = pq.read_table(file, columns=[KEY])[KEY].to_pylist()
        bloom = BloomFilter.deserialize(meta[b"org.apache.hudi.bloomfilter"], name)
        assert meta[b"hoodie_bloom_filter_type_code"] == b"DYNAMIC_V0"
        assert all(bloom.might_contain(k.encode()) for k in keys)
        assert (meta[b"hoodie_min_record_key"], meta[b"hoodie_max_record_key"]) == (min(keys).encode(),
                                                                                    max(keys).encode())


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_rewritten_base_file_names_the_range_of_the_keys_it_holds(tmp_path, table_type):
    """A rewrite that keeps every key widens its file's key range by the new keys (below and above it); one that
    deletes keys names the range of those left (the lowest and the highest key deleted)."""
    path = tmp_path / "t"
    t = create(path, table_type, 9, "SIMPLE")
    t.write(batch(["k3", "k4", "k5"], 1))
    t.write(batch(["k1", "k4", "k9"], 2))  # k1 below the range, k9 above, k4 an update
    t.write(batch(["k1", "k9"], 3), operation="delete")
    t.write(batch(["k2"], 4))  # a rewrite again (merge-on-read: the deletes sit in a log of the file group)
    expected = {"k2", "k3", "k4", "k5"} if table_type == "COPY_ON_WRITE" else None
    checked = 0
    for name, meta in footers(path).items():
        [file] = list(path.rglob(name))
        keys = pq.read_table(file, columns=[KEY])[KEY].to_pylist()
        assert (meta[b"hoodie_min_record_key"], meta[b"hoodie_max_record_key"]) == (min(keys).encode(),
                                                                                    max(keys).encode())
        checked += 1
    assert checked >= 3
    assert sorted(t.to_arrow(columns=["id"])["id"].to_pylist()) == ["k2", "k3", "k4", "k5"]
    if expected is not None:
        [latest] = set(t.to_arrow(columns=[FILE])[FILE].to_pylist())
        [file] = list(path.rglob(latest))
        assert set(pq.read_table(file, columns=[KEY])[KEY].to_pylist()) == expected


def latest_filter(t: HudiTable, path: Path) -> tuple[BloomFilter, list[str]]:
    """The bloom filter in the footer of the one file group's latest base file, and that file's keys."""
    [name] = set(t.to_arrow(columns=[FILE])[FILE].to_pylist())
    [file] = list(path.rglob(name))
    bloom = BloomFilter.deserialize(pq.read_metadata(file).metadata[b"org.apache.hudi.bloomfilter"], name)
    return bloom, pq.read_table(file, columns=[KEY])[KEY].to_pylist()


def rewrite_footer(file: Path, changes: dict[bytes, bytes]) -> None:
    """Change a base file's footer keys in place (the file must not shrink: it would look truncated)."""
    table, meta = pq.read_table(file), {**pq.read_metadata(file).metadata, **changes}
    with pq.ParquetWriter(file, table.schema, store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata({k.decode(): v.decode() for k, v in meta.items()})


def damage_filter(file: Path) -> None:
    """A bloom filter that is not Base64, no shorter than the one it replaces."""
    text = pq.read_metadata(file).metadata[b"org.apache.hudi.bloomfilter"]
    rewrite_footer(file, {b"org.apache.hudi.bloomfilter": b"!" * (len(text) + 1000)})


def test_a_rewrite_grows_the_filter_of_the_file_it_replaces_until_it_holds_too_many_dropped_keys(tmp_path):
    path = tmp_path / "t"
    t = create(path, "COPY_ON_WRITE", 6, "BLOOM")
    t.write(batch([f"k{i:03d}" for i in range(100)], 1))
    t.write(batch([f"k{i:03d}" for i in range(90, 110)], 2))  # 10 updates, 10 new keys: the file is rewritten
    bloom, keys = latest_filter(t, path)
    assert bloom.key_count == len(keys) == 110 and all(bloom.might_contain(k.encode()) for k in keys)
    t.write(batch([f"k{i:03d}" for i in range(5)], 3), operation="delete")  # the filter keeps the 5 dropped keys
    bloom, keys = latest_filter(t, path)
    assert (bloom.key_count, len(keys)) == (110, 105) and all(bloom.might_contain(k.encode()) for k in keys)
    t.write(batch([f"k{i:03d}" for i in range(5, 15)], 4), operation="delete")  # 15 dropped of 95: rebuilt
    bloom, keys = latest_filter(t, path)
    assert bloom.key_count == len(keys) == 95 and all(bloom.might_contain(k.encode()) for k in keys)
    assert rows(t.to_arrow(), ["id"]) == [(f"k{i:03d}",) for i in range(15, 110)]


def test_a_rewrite_of_a_file_whose_filter_cannot_be_read_builds_it_from_the_keys(tmp_path):
    path = tmp_path / "t"
    t = create(path, "COPY_ON_WRITE", 6, "BLOOM")
    t.write(batch([f"k{i}" for i in range(20)], 1))
    [file] = [p for p in path.rglob("*.parquet") if ".hoodie" not in p.parts]
    damage_filter(file)
    assert pq.read_metadata(file).metadata[b"org.apache.hudi.bloomfilter"].startswith(b"!!!")
    t.write(batch(["k3", "k20", "k21"], 2))
    bloom, keys = latest_filter(t, path)
    assert bloom.key_count == len(keys) == 22 and all(bloom.might_contain(k.encode()) for k in keys)
    assert rows(t.to_arrow(), ["id", "ts"]) == sorted(((f"k{i}", 2 if i in (3, 20, 21) else 1) for i in range(22)),
                                                      key=repr)


def slices_read(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """The file groups whose keys tagging reads, as the writes after this call read them (the filters consulted
    however few rows the files have)."""
    monkeypatch.setattr(bloom_lookup, "TESTED_KEY_COST", 0)
    read: list[str] = []
    original = lookup.KeyLookup._slice_keys

    def spy(self: lookup.KeyLookup, storage: Any, sl: Any) -> pa.Table:
        read.append(sl.file_id)
        return original(self, storage, sl)

    monkeypatch.setattr(lookup.KeyLookup, "_slice_keys", spy)
    return read


NEW_GROUP_PER_WRITE = {"hoodie.parquet.small.file.limit": "0"}  # inserts never fill a file: a wrong tag shows


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", ["BLOOM", "GLOBAL_BLOOM"])
def test_the_bloom_index_reads_only_the_files_whose_key_range_and_filter_may_hold_a_key(tmp_path, monkeypatch,
                                                                                      table_type, index):
    t = create(tmp_path / "t", table_type, 6, index, **NEW_GROUP_PER_WRITE)
    for start in range(0, 200, 50):  # time-ordered keys: a file group per write
        t.write(batch([f"k{i:03d}" for i in range(start, start + 50)], 1))
    before = file_ids(t)
    newest = before[("d1", "k150")]
    read = slices_read(monkeypatch)
    t.write(batch(["k160", "k170"] + [f"k{i}" for i in range(200, 210)], 2))  # recent updates, new keys
    assert set(read) == {newest}
    t.write(batch(["k160", "k199"], 3))  # the merge-on-read group has logs now: its base file still speaks for it
    assert set(read) == {newest}
    after = file_ids(t)
    assert all(after[k] == g for k, g in before.items())
    assert len(after) == 210 and len(set(after.values())) == 5
    assert rows(t.to_arrow(), ["id", "ts"]) == sorted(
        ((f"k{i:03d}", 3 if i in (160, 199) else 2 if i >= 200 or i == 170 else 1) for i in range(210)), key=repr)


def test_the_filter_is_not_consulted_where_testing_the_keys_costs_more_than_reading_the_file(tmp_path, monkeypatch):
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "BLOOM", **NEW_GROUP_PER_WRITE)
    t.write(batch([f"k{i:03d}" for i in range(100)], 1))
    tested: list[int] = []
    original = bloom_lookup.FilterBits.might_contain

    def spy(self: bloom_lookup.FilterBits, probe: Any, among: Any = None) -> Any:
        out = original(self, probe, among)
        tested.append(len(out))
        return out

    monkeypatch.setattr(bloom_lookup.FilterBits, "might_contain", spy)
    t.write(batch(["k050", "k100"], 2))  # 1 key in range x 40 < 100 rows: the filter decides
    t.write(batch(["k051", "k052", "k053", "k054"], 3))  # 4 x 40 > 100 rows: the file's keys decide
    assert tested == [1]  # k100 lies above the range
    assert rows(t.to_arrow(), ["id", "ts"]) == sorted(
        ((f"k{i:03d}", 2 if i in (50, 100) else 3 if 51 <= i <= 54 else 1) for i in range(101)), key=repr)


def int_batch(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": pa.array(ids, pa.int64()), "ts": [ts] * len(ids), "dt": ["d1"] * len(ids),
                     "v": [f"{i}@{ts}" for i in ids]})


def test_integer_keys_are_pruned_by_the_ranges_of_their_digits(tmp_path, monkeypatch):
    # the record keys are decimal digits, ordered as strings: "12" lies above "104" and below "5"
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "BLOOM", **NEW_GROUP_PER_WRITE)
    for ids in ([5, 6, 7, 8, 9], [10, 11, 12, 13, 14], [100, 101, 102, 103, 104]):
        t.write(int_batch(ids, 1))
    before = file_ids(t)
    read = slices_read(monkeypatch)
    t.write(int_batch([7, 12, 1000, 3], 2))  # "1000" lies in the ranges ["10", "14"] and ["100", "104"]
    assert set(read) == {before[("d1", "7")], before[("d1", "12")]}
    after = file_ids(t)
    assert all(after[k] == g for k, g in before.items()) and len(after) == 17
    assert sorted(t.to_arrow(columns=["id", "ts"]).to_pylist(), key=lambda r: r["id"]) == [
        {"id": i, "ts": 2 if i in (7, 12, 1000, 3) else 1} for i in sorted([3, *range(5, 15), *range(100, 105), 1000])]


def test_non_ascii_keys_and_emptied_files_are_tagged_by_their_filters(tmp_path, monkeypatch):
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "BLOOM", **NEW_GROUP_PER_WRITE)
    t.write(batch(["\U0001f600a", "\ue000b"], 1))
    # the bounds as Apache Hudi writes them: Java orders by UTF-16 units, where "\U0001f600" comes before "\ue000"
    [file] = [p for p in (tmp_path / "t").rglob("*.parquet")]
    rewrite_footer(file, {b"hoodie_min_record_key": "\U0001f600a".encode(),
                          b"hoodie_max_record_key": "\ue000b".encode()})
    t.write(batch(["é", "z"], 1))
    t.write(batch(["gone1", "gone2"], 1))
    t.write(batch(["gone1", "gone2"], 2), operation="delete")  # an emptied file group
    before = file_ids(t)
    read = slices_read(monkeypatch)
    t.write(batch(["\ue000b", "é", "gone1"], 3))
    assert before[("d1", "é")] in read and before[("d1", "\ue000b")] in read
    after = file_ids(t)
    assert all(after[k] == g for k, g in before.items()) and len(after) == 5
    assert rows(t.to_arrow(), ["id", "ts"]) == sorted(
        [("\U0001f600a", 1), ("\ue000b", 3), ("é", 3), ("z", 1), ("gone1", 3)], key=repr)


def test_a_file_whose_filter_cannot_be_read_is_searched_by_its_keys(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", 6, "BLOOM", **NEW_GROUP_PER_WRITE)
    t.write(batch([f"k{i}" for i in range(20)], 1))
    [file] = [p for p in (tmp_path / "t").rglob("*.parquet")]
    damage_filter(file)
    before = file_ids(t)
    t.write(batch(["k3", "k20"], 2))
    after = file_ids(t)
    assert after[("d1", "k3")] == before[("d1", "k3")] and len(after) == 21
    assert rows(t.to_arrow(), ["id", "ts"]) == sorted(((f"k{i}", 2 if i in (3, 20) else 1) for i in range(21)),
                                                      key=repr)


def test_bloom_filters_are_written_where_a_bloom_index_may_read_them(reference_dir, tmp_path):
    """Into tables that record no index (Apache Hudi writes a filter into every base file, and a Hudi job may use
    its bloom index on them); not into tables hudi-py created with SIMPLE (hashing every key costs time)."""
    path = tmp_path / "hudi"
    shutil.copytree(reference_dir / "cow_v6_nonpartitioned", path)
    t = HudiTable(str(path))
    before = set(footers(path))
    t.write(t.to_arrow().drop_columns([c for c in t.to_arrow().column_names if c.startswith("_hoodie")]).slice(0, 1))
    new = {n: m for n, m in footers(path).items() if n not in before}
    assert new and all(b"org.apache.hudi.bloomfilter" in m for m in new.values())
    simple = create(tmp_path / "simple", "COPY_ON_WRITE", 6, "SIMPLE")
    simple.write(batch(["a"], 1))
    assert not any(b"org.apache.hudi.bloomfilter" in m for m in footers(tmp_path / "simple").values())
