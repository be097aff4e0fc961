"""One probe per write option of the registry (hudi_ds.config.options, scope "write"): a write through some entry
point with the option set, and a check that the option did what its doc says. tests/test_write_options.py runs
every probe through the Python API, tests/spark/test_spark_write_options.py through Spark, so an option cannot
work through one door and be ignored by another; a new write option without a probe fails both."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ds import HudiTable
from hudi_ds.config.option_parsing import key_of
from hudi_ds.log.format import BlockType, read_blocks
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.record_index import all_locations
from hudi_ds.recovery.heartbeat import touch_heartbeat
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.task import TaskWriter

# (table path, data, options) -> None: one write through an entry point
Write = Callable[[str, pa.Table, dict[str, str]], None]
Probe = Callable[[Write, str], None]

PROBES: dict[str, Probe] = {}


def probe(field: str) -> Callable[[Probe], Probe]:
    def register(fn: Probe) -> Probe:
        PROBES[field] = fn
        return fn

    return register


def python_api(path: str, data: pa.Table, options: dict[str, str]) -> None:
    HudiTable(path, options=options).write(data)


def rows(ids: list[str], ts: int, dt: str = "d1", **extra: list[str]) -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "dt": [dt] * len(ids),
                     "v": [f"{i}@{ts}" for i in ids], **extra})


def table(path: str, options: dict[str, str] | None = None) -> HudiTable:
    """A merge-on-read table of keys a, b, c (ts 1) in partition d1, two buckets."""
    t = HudiTable.create(path, table_name="probe", record_key="id", ordering_field="ts", partition_by="dt",
                         buckets=2, options=options)
    t.write(rows(["a", "b", "c"], 1))
    return t


def values(t: HudiTable) -> dict[str, str]:
    return {r["id"]: r["v"] for r in t.to_arrow(columns=["id", "v"]).to_pylist()}


def state(t: HudiTable) -> tuple[list[tuple[str, str]], dict[str, str], set[str]]:
    """Timeline, rows and data files: what a refused write must leave as it was."""
    files = {str(p) for p in Path(t.path).rglob("*") if p.is_file() and ".hoodie" not in p.parts}
    return [(i.requested_time, i.state.name) for i in t.timeline()], values(t), files


def refused(write: Write, path: str, t: HudiTable, data: pa.Table, options: dict[str, str], message: str) -> None:
    before = state(t)
    with pytest.raises(Exception, match=message):
        write(path, data, options)
    assert state(t) == before


@probe("operation")
def _operation(write: Write, path: str) -> None:
    t = table(path)
    write(path, rows(["a"], 2), {key_of("operation"): "delete"})
    assert sorted(values(t)) == ["b", "c"]


@probe("log_block_format")
def _log_block_format(write: Write, path: str) -> None:
    t = table(path)
    write(path, rows(["a"], 2), {key_of("log_block_format"): "avro"})
    logs = [p for p in Path(path).rglob("*.log.*") if ".hoodie" not in p.parts]
    kinds = {b.block_type for p in logs for b in read_blocks(p.read_bytes(), str(p))}
    assert kinds == {BlockType.AVRO_DATA}
    assert values(t)["a"] == "a@2"


@probe("parquet_compression")
def _parquet_compression(write: Write, path: str) -> None:
    t = table(path)
    write(path, rows(["x"], 2, dt="d2"), {key_of("parquet_compression"): "gzip"})
    [base] = list((Path(path) / "d2").glob("*.parquet"))
    meta = pq.ParquetFile(base).metadata
    assert {meta.row_group(0).column(i).compression for i in range(meta.num_columns)} == {"GZIP"}
    assert values(t)["x"] == "x@2"


@probe("changelog_column")
def _changelog_column(write: Write, path: str) -> None:
    t = table(path)
    write(path, rows(["a", "b", "d"], 2, op=["u", "d", "c"]), {key_of("changelog_column"): "op"})
    assert values(t) == {"a": "a@2", "c": "c@1", "d": "d@2"}
    assert "op" not in t.schema.names


@probe("changelog_enabled")
def _changelog_enabled(write: Write, path: str) -> None:
    t = table(path)
    kinds = ["update_preimage", "update_postimage", "delete", "insert"]
    write(path, rows(["a", "a", "b", "d"], 2, _change_type=kinds), {key_of("changelog_enabled"): "true"})
    assert values(t) == {"a": "a@2", "c": "c@1", "d": "d@2"}
    assert "_change_type" not in t.schema.names


@probe("delete_field")
@probe("delete_marker")
def _delete_marker(write: Write, path: str) -> None:
    """A version 6 table: the marker is a setting of the write (version 9 tables record it when created)."""
    t = table(path, {"hoodie.write.table.version": "6"})
    marker = {key_of("delete_field"): "kind", key_of("delete_marker"): "gone"}
    write(path, rows(["a", "b", "d"], 2, kind=["gone", "live", "gone"]), marker)
    assert values(t) == {"b": "b@2", "c": "c@1"}


@probe("drop_partition_columns")
def _drop_partition_columns(write: Write, path: str) -> None:
    t = table(path)
    refused(write, path, t, rows(["a"], 2), {key_of("drop_partition_columns"): "true"}, "only false")


def _accepted_and_ignored(field: str, value: str) -> Probe:
    """Options of other engines' writers or of the streaming sink only: a batch write takes them and writes as
    it would without them."""

    def check(write: Write, path: str) -> None:
        t = table(path)
        write(path, rows(["a", "d"], 2), {key_of(field): value})
        assert values(t) == {"a": "a@2", "b": "b@1", "c": "c@1", "d": "d@2"}

    return check


probe("write_tasks")(_accepted_and_ignored("write_tasks", "4"))
probe("checkpoint_location")(_accepted_and_ignored("checkpoint_location", "/nowhere/checkpoint"))
probe("streaming_identifier")(_accepted_and_ignored("streaming_identifier", "writer-2"))


@probe("metadata_enable")
def _metadata_enable(write: Write, path: str) -> None:
    """true creates the metadata table of a version 9 table and keeps it; false drops it; unset is Hudi's
    default (true on version 9: it is built again); a version 6 table is refused before anything is written."""
    key = key_of("metadata_enable")
    t = table(path, {key_of("table_version"): "9", key: "false"})
    assert not (Path(path) / ".hoodie" / "metadata").exists()
    write(path, rows(["a"], 2), {key: "true"})
    write(path, rows(["b"], 2), {})
    listing = Path(path) / ".hoodie" / "metadata" / "files"
    assert len([p for p in listing.iterdir() if ".log." in p.name]) == 2  # both writes recorded
    assert HudiTable(path).config.metadata_partitions == ["files"]
    write(path, rows(["c"], 2), {key: "false"})
    assert not (Path(path) / ".hoodie" / "metadata").exists() and HudiTable(path).config.metadata_partitions == []
    write(path, rows(["a"], 3), {})
    assert HudiTable(path).config.metadata_partitions == ["files"]
    assert values(t) == {"a": "a@3", "b": "b@2", "c": "c@2"}
    old = table(f"{path}-v6")
    refused(write, f"{path}-v6", old, rows(["a"], 2), {key: "true"}, "version 8 and 9")


@probe("column_stats_enable")
def _column_stats_enable(write: Write, path: str) -> None:
    """true builds the column_stats partition from the files already written and records every later write's
    files in it (reads then skip by it); false drops the partition only; without the metadata table it is
    refused before anything is written."""
    t = table(path, {key_of("table_version"): "9"})
    key, mdt = key_of("column_stats_enable"), key_of("metadata_enable")
    write(path, rows(["a"], 2), {mdt: "true"})
    write(path, rows(["b"], 2, dt="d2"), {key: "true"})
    write(path, rows(["c"], 2, dt="d3"), {})
    assert HudiTable(path).config.metadata_partitions == ["column_stats", "files"]
    stats = HudiTable(path)._read(lambda snap: snap.index_stats("column_stats", ["dt"]))
    assert stats is not None and {s["dt"].min_value.value for s in stats.values()} \
        == {"d1", "d2", "d3"}
    write(path, rows(["d"], 2), {key: "false"})
    assert not (Path(path) / ".hoodie" / "metadata" / "column_stats").exists()
    assert HudiTable(path).config.metadata_partitions == ["files"]
    assert values(t) == {"a": "a@2", "b": "b@2", "c": "c@2", "d": "d@2"}
    refused(write, path, t, rows(["e"], 2), {key: "true", mdt: "false"}, "needs the metadata table")


@probe("column_stats_columns")
def _column_stats_columns(write: Write, path: str) -> None:
    """The listed columns (after the meta columns) are recorded in the index definitions file and the
    column_stats built then cover them only; a column the table does not have is refused before anything is
    written."""
    t = table(path, {key_of("table_version"): "9", key_of("metadata_enable"): "true"})
    key = key_of("column_stats_columns")
    write(path, rows(["d"], 2), {key_of("column_stats_enable"): "true", key: "v"})
    defs = json.loads((Path(path) / ".hoodie" / ".index_defs" / "index.json").read_text())
    assert defs["indexDefinitions"]["column_stats"]["sourceFields"] == [
        "_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_record_key", "v"]
    stats = HudiTable(path)._read(lambda snap: snap.index_stats("column_stats", None))
    assert stats and all("v" in columns and "dt" not in columns for columns in stats.values())
    refused(write, path, t, rows(["e"], 2), {key: "v,nope"}, "nope")


@probe("partition_stats_enable")
def _partition_stats_enable(write: Write, path: str) -> None:
    """true builds partition_stats beside column_stats from the files already written and records every later
    write in it; false drops it; without column_stats it is refused before anything is written."""
    t = table(path, {key_of("table_version"): "9", key_of("metadata_enable"): "true"})
    key, column_stats = key_of("partition_stats_enable"), key_of("column_stats_enable")
    refused(write, path, t, rows(["e"], 2), {key: "true"}, "needs column_stats")
    write(path, rows(["f"], 2, dt="d2"), {column_stats: "true", key: "true"})
    write(path, rows(["g"], 2, dt="d3"), {})
    assert HudiTable(path).config.metadata_partitions == ["column_stats", "files", "partition_stats"]
    stats = HudiTable(path)._read(lambda snap: snap.index_stats("partition_stats", ["dt"]))
    assert stats is not None and {s["dt"].min_value.value for s in stats.values()} == {"d1", "d2", "d3"}
    write(path, rows(["h"], 2), {key: "false"})
    assert not (Path(path) / ".hoodie" / "metadata" / "partition_stats").exists()
    assert HudiTable(path).config.metadata_partitions == ["column_stats", "files"]
    assert values(t) == {"a": "a@1", "b": "b@1", "c": "c@1", "f": "f@2", "g": "g@2", "h": "h@2"}


@probe("auto_upgrade")
def _auto_upgrade(write: Write, path: str) -> None:
    """Off, a write asking for a higher table version keeps the table at its own, as Apache Hudi's writers do."""
    t = table(path)
    write(path, rows(["a"], 2), {key_of("table_version"): "8", key_of("auto_upgrade"): "false"})
    assert HudiTable(path).config.version == 6
    assert values(t)["a"] == "a@2"


@probe("heartbeat_timeout_s")
def _heartbeat_timeout(write: Write, path: str) -> None:
    """A crashed writer's instant is rolled back by the next write once its heartbeat is older than the option."""
    t = table(path)
    plan = Coordinator(t.storage, t.config).begin("upsert", t.schema)
    task = TaskWriter(plan)
    task.write(rows(["a"], 9))
    task.finish()  # files written, never committed: the writer "crashed"
    touch_heartbeat(t.storage, plan.instant)
    write(path, rows(["b"], 2), {})  # the default timeout (300 s): a writer that beat just now is alive
    assert plan.instant in [i.requested_time for i in t.timeline() if not i.is_completed]
    write(path, rows(["c"], 2), {key_of("heartbeat_timeout_s"): "0"})
    assert [i.requested_time for i in t.timeline() if not i.is_completed] == []
    assert not [p for p in Path(path).rglob("*") if plan.instant in p.name and ".hoodie" not in p.parts]
    assert values(t) == {"a": "a@1", "b": "b@2", "c": "c@2"}


# ---- the lookup indexes (hoodie.index.type SIMPLE / GLOBAL_SIMPLE): partition moves and file sizing -------------

def lookup_table(path: str, index: str = "SIMPLE", version: int = 6) -> HudiTable:
    """A copy-on-write table of keys a, b, c (ts 1) in partition d1 with a lookup index: one small base file."""
    t = HudiTable.create(path, table_name="probe", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="COPY_ON_WRITE", options={key_of("index_type"): index,
                                                              key_of("table_version"): str(version)})
    t.write(rows(["a", "b", "c"], 1))
    return t


def file_groups(path: str, partition: str = "d1") -> set[str]:
    return {p.name.split("_")[0] for p in (Path(path) / partition).glob("*.parquet")}


def new_groups_for_five_keys(write: Write, path: str, options: dict[str, str]) -> int:
    """How many file groups five new keys of partition d1 went to (a small file limit of 1 byte: no file is small,
    and the record size threshold, a multiple of it, is then the number of bytes)."""
    lookup_table(path)
    before = file_groups(path)
    write(path, rows(["k1", "k2", "k3", "k4", "k5"], 2), options)
    assert values(HudiTable(path))["k5"] == "k5@2"
    return len(file_groups(path) - before)


def _moves(field: str, index: str) -> Probe:
    def check(write: Write, path: str) -> None:
        _update_partition_path(write, path, field, index)

    return check


def _update_partition_path(write: Write, path: str, field: str, index: str) -> None:
    t = lookup_table(path, index)
    write(path, rows(["a"], 2, dt="d2"), {key_of(field): "false"})
    held = t.to_arrow(columns=["id", "v", "_hoodie_partition_path"]).to_pylist()
    assert [(r["v"], r["_hoodie_partition_path"]) for r in held if r["id"] == "a"] == [("a@2", "d1")]
    write(path, rows(["b"], 2, dt="d2"), {})  # the default moves the key
    moved = t.to_arrow(columns=["id", "_hoodie_partition_path"]).to_pylist()
    assert [r["_hoodie_partition_path"] for r in moved if r["id"] == "b"] == ["d2"]


probe("update_partition_path")(_moves("update_partition_path", "GLOBAL_SIMPLE"))
probe("bloom_update_partition_path")(_moves("bloom_update_partition_path", "GLOBAL_BLOOM"))


@probe("bloom_use_metadata")
def _bloom_use_metadata(write: Write, path: str) -> None:
    """The key ranges come from the metadata table's column_stats, not the footers: a footer whose range (made
    wrong here) leaves out a key its file holds misleads a write without the option, not one with it."""
    t = HudiTable.create(path, table_name="probe", record_key="id", ordering_field="ts", partition_by="dt",
                         options={"hoodie.index.type": "BLOOM", "hoodie.write.table.version": "9",
                                  "hoodie.metadata.index.column.stats.enable": "true"})
    t.write(rows(["a", "b"], 1))
    [file] = Path(path, "d1").glob("*.parquet")
    data, footer = pq.read_table(file), pq.read_metadata(file).metadata
    with pq.ParquetWriter(file, data.schema, store_schema=False) as writer:
        writer.write_table(data)
        writer.add_key_value_metadata({**{k.decode(): v.decode() for k, v in footer.items()},
                                       "hoodie_min_record_key": "z", "hoodie_max_record_key": "z"})
    write(path, rows(["a"], 2), {key_of("bloom_use_metadata"): "true"})
    assert values(t) == {"a": "a@2", "b": "b@1"}  # the update found the file group holding "a"
    write(path, rows(["b"], 2), {})  # the footer's range says "b" is new: a second "b" in a new file group
    assert sorted(r["id"] for r in t.to_arrow(columns=["id"]).to_pylist()) == ["a", "b", "b"]


@probe("record_index_update_partition_path")
def _record_index_update_partition_path(write: Write, path: str) -> None:
    """RECORD_INDEX keeps a key in the partition that holds it by default (as Apache Hudi); true moves it."""
    t = lookup_table(path, "RECORD_INDEX", version=9)
    write(path, rows(["a"], 2, dt="d2"), {})
    write(path, rows(["b"], 2, dt="d2"), {key_of("record_index_update_partition_path"): "true"})
    held = {r["id"]: (r["v"], r["_hoodie_partition_path"])
            for r in t.to_arrow(columns=["id", "v", "_hoodie_partition_path"]).to_pylist()}
    assert held == {"a": ("a@2", "d1"), "b": ("b@2", "d2"), "c": ("c@1", "d1")}


def record_index(path: str) -> dict[str, str]:
    """The record index of the table at `path`: key -> file group."""
    t = HudiTable(path)
    return {k: loc.file_id for k, loc in all_locations(MetadataTable.open(t.storage), t.load_timeline()).items()}


def record_index_groups(path: str) -> int:
    folder = Path(path) / ".hoodie" / "metadata" / "record_index"
    return len({p.name.split("_")[0] for p in folder.glob("*.hfile")})


@probe("record_index_enable")
def _record_index_enable(write: Write, path: str) -> None:
    """true builds the record index of a version 9 table from its keys and keeps it; false drops it."""
    key = key_of("record_index_enable")
    t = table(path, {key_of("table_version"): "9"})
    write(path, rows(["d"], 2), {key: "true"})
    assert HudiTable(path).config.metadata_partitions == ["files", "record_index"]
    assert sorted(record_index(path)) == ["a", "b", "c", "d"]
    write(path, rows(["e"], 2), {})
    assert sorted(record_index(path)) == ["a", "b", "c", "d", "e"]
    write(path, rows(["f"], 2), {key: "false"})
    assert HudiTable(path).config.metadata_partitions == ["files"]
    assert values(t)["f"] == "f@2"


def _record_index_sizing(field: str, value: str, expected_groups: int) -> Probe:
    """A record index built with the option set gets `expected_groups` file groups (Hudi's estimate: room for
    growth-factor times the keys at 48 bytes each per file group of at most max.filegroup.size, within the
    min and max counts)."""
    def check(write: Write, path: str) -> None:
        table(path, {key_of("table_version"): "9"})
        sizing = {key_of("record_index_min_file_groups"): "1", key_of("record_index_max_file_groups"): "50",
                  key_of("record_index_max_file_group_bytes"): "96", key_of("record_index_growth_factor"): "2",
                  key_of(field): value}
        write(path, rows(["d"], 2), {key_of("record_index_enable"): "true", **sizing})
        assert record_index_groups(path) == expected_groups
        assert sorted(record_index(path)) == ["a", "b", "c", "d"]

    return check


# built before the write from keys a, b, c: x2 growth = 6 keys of 48 bytes; at most 96 bytes per group = 3 groups,
# unless the option changes the estimate or bounds it
probe("record_index_min_file_groups")(_record_index_sizing("record_index_min_file_groups", "5", 5))
probe("record_index_max_file_groups")(_record_index_sizing("record_index_max_file_groups", "2", 2))
probe("record_index_max_file_group_bytes")(_record_index_sizing("record_index_max_file_group_bytes", "192", 1))
probe("record_index_growth_factor")(_record_index_sizing("record_index_growth_factor", "4", 6))


@probe("small_file_limit")
def _small_file_limit(write: Write, path: str) -> None:
    assert new_groups_for_five_keys(write, path, {key_of("small_file_limit"): "0"}) == 1
    assert new_groups_for_five_keys(write, path + "_default", {}) == 0  # they fill the small file


@probe("small_file_candidates")
def _small_file_candidates(write: Write, path: str) -> None:
    # merge-on-read: the small file takes the new keys unless no small file may (copy-on-write ignores the limit)
    for limit, new_groups in (("0", 1), ("1", 0)):
        at = f"{path}_{limit}"
        HudiTable.create(at, table_name="probe", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="MERGE_ON_READ", options={key_of("index_type"): "SIMPLE"})
        write(at, rows(["a", "b", "c"], 1), {})
        before = file_groups(at)
        write(at, rows(["k1", "k2"], 2), {key_of("small_file_candidates"): limit})
        assert len(file_groups(at) - before) == new_groups
        assert values(HudiTable(at)) == {"a": "a@1", "b": "b@1", "c": "c@1", "k1": "k1@2", "k2": "k2@2"}


@probe("max_file_size")
def _max_file_size(write: Write, path: str) -> None:
    # 1024-byte records (the estimate: no commit was large enough to measure), two per file group
    assert new_groups_for_five_keys(write, path, {key_of("max_file_size"): "2048", key_of("small_file_limit"): "1",
                                                  key_of("record_size_threshold"): "1e30"}) == 3


@probe("insert_split_size")
def _insert_split_size(write: Write, path: str) -> None:
    assert new_groups_for_five_keys(write, path, {key_of("insert_split_size"): "2", key_of("small_file_limit"): "0",
                                                  key_of("auto_split_inserts"): "false"}) == 3


@probe("auto_split_inserts")
def _auto_split_inserts(write: Write, path: str) -> None:
    # the split size (500000), not max file size / record size (two), counts new keys per file group
    assert new_groups_for_five_keys(write, path, {key_of("auto_split_inserts"): "false",
                                                  key_of("small_file_limit"): "1",
                                                  key_of("max_file_size"): "2048",
                                                  key_of("record_size_threshold"): "1e30"}) == 1


@probe("record_size_estimate")
def _record_size_estimate(write: Write, path: str) -> None:
    # no commit measures records (the threshold is beyond every commit): the estimate counts, two per file group
    assert new_groups_for_five_keys(write, path, {key_of("record_size_estimate"): "4096",
                                                  key_of("max_file_size"): "8192", key_of("small_file_limit"): "1",
                                                  key_of("record_size_threshold"): "1e30"}) == 3


@probe("record_size_threshold")
def _record_size_threshold(write: Write, path: str) -> None:
    # a 1-byte small file limit makes the first commit large enough to measure records by (a few hundred bytes
    # each: one new file group); a threshold beyond its size leaves the estimate (two records per file group)
    sizing = {key_of("small_file_limit"): "1", key_of("record_size_estimate"): "100000",
              key_of("max_file_size"): "200000"}
    assert new_groups_for_five_keys(write, path, sizing) == 1
    assert new_groups_for_five_keys(write, path + "_2", {**sizing, key_of("record_size_threshold"): "1e9"}) == 3


@probe("insert_dup_policy")
def _insert_dup_policy(write: Write, path: str) -> None:
    """drop: the rows whose keys the table holds are left out (an upsert is written as an insert); fail: the write
    fails naming them, and the table reads as before."""
    t = table(path)
    write(path, rows(["a", "d"], 2), {key_of("insert_dup_policy"): "drop"})
    assert values(t) == {"a": "a@1", "b": "b@1", "c": "c@1", "d": "d@2"}
    with pytest.raises(Exception, match=r"already holds \(b\)"):
        write(path, rows(["b", "e"], 3), {key_of("insert_dup_policy"): "fail"})
    assert values(HudiTable(path)) == {"a": "a@1", "b": "b@1", "c": "c@1", "d": "d@2"}


@probe("partitions_to_delete")
def _partitions_to_delete(write: Write, path: str) -> None:
    """delete_partition replaces the partitions the option names (a wildcard matches), whatever the rows say."""
    t = table(path)
    write(path, rows(["x"], 2, "d2"), {})
    write(path, rows(["y"], 3, "d3"), {key_of("operation"): "delete_partition", key_of("partitions_to_delete"): "d*"})
    assert values(t) == {}


@probe("insert_drop_duplicates")
def _insert_drop_duplicates(write: Write, path: str) -> None:
    t = table(path)
    write(path, rows(["a", "d"], 2), {key_of("insert_drop_duplicates"): "true"})
    assert values(t) == {"a": "a@1", "b": "b@1", "c": "c@1", "d": "d@2"}
