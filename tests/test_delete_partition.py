"""Apache Hudi's delete_partition: a replacecommit (operation type DELETE_PARTITION) that replaces every file group
of the partitions named by hoodie.datasource.write.partitions.to.delete (wildcards, unknown paths skipped) or by the
rows written; no file written. Our reader and hudi-rs agree with a model after each step, the metadata table drops
the partitions from its list (and the record index their keys), time travel and the change feed see the rows before
and their deletes, a pending compaction of a partition refuses it, and copies of tables Apache Hudi wrote take it."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import ConfigError, HudiTable, InstantStateError, InvalidDataError
from hudi_ds.cli.validate import validate
from hudi_ds.metadata import records as md
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import files_slice, merged_records

PARTITIONS = ["2024-01-01", "2024-01-02", "2024-02-01", "other"]


def create(path: Path, table_type: str, version: int, index: str) -> HudiTable:
    options = {"hoodie.write.table.version": str(version)}
    options.update({"hoodie.bucket.index.num.buckets": "2"} if index == "BUCKET" else {"hoodie.index.type": index})
    return HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type=table_type, options=options)


def batch(ids: list[int], ts: int, partitions: list[str]) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": partitions,
                     "v": [f"{i}@{ts}" for i in ids]})


def ours(t: HudiTable) -> list[tuple]:
    return rows(HudiTable(t.path).to_arrow(), ["id", "dt", "v"])


def theirs(t: HudiTable) -> list[tuple]:
    return rows(hudi_rs(t.path), ["id", "dt", "v"])


def listed_partitions(t: HudiTable) -> list[str]:
    mdt = MetadataTable.open(t.storage)
    records = merged_records(mdt, files_slice(mdt, mdt.timeline(), t.load_timeline(), mdt.storage.list(md.FILES)))
    return md.listed_partitions(records[md.ALL_PARTITIONS_KEY])


def last_commit(t: HudiTable) -> dict:
    inst = HudiTable(t.path).timeline()[-1]
    assert inst.action == "replacecommit"
    return HudiTable(t.path).load_timeline().commit_metadata(inst).to_json_dict()


@pytest.mark.parametrize("table_type,version,index", [
    ("COPY_ON_WRITE", 6, "BUCKET"), ("MERGE_ON_READ", 6, "SIMPLE"), ("COPY_ON_WRITE", 9, "GLOBAL_SIMPLE"),
    ("MERGE_ON_READ", 9, "RECORD_INDEX"), ("MERGE_ON_READ", 8, "BLOOM")])
def test_partitions_named_by_the_option_or_the_rows_are_replaced(tmp_path, table_type, version, index):
    t = create(tmp_path / "t", table_type, version, index)
    t.write(batch(list(range(16)), 1, PARTITIONS * 4))
    t.write(batch([0, 1, 2], 2, PARTITIONS[:3]))  # logs on merge-on-read
    model = {r[0]: r for r in ours(t)}
    before = HudiTable(t.path).timeline()[-1].requested_time

    t.delete_partitions(["2024-01-*", "nowhere"])  # a wildcard, and a path the table does not have
    model = {k: r for k, r in model.items() if not r[1].startswith("2024-01-")}
    assert ours(t) == sorted(model.values()) == theirs(t)
    meta = last_commit(t)
    assert meta["operationType"] == "DELETE_PARTITION" and not meta["partitionToWriteStats"]
    assert sorted(meta["partitionToReplaceFileIds"]) == ["2024-01-01", "2024-01-02"]
    assert all(meta["partitionToReplaceFileIds"].values())

    t.write(pa.table({"dt": ["other", "2024-01-01"]}), operation="delete_partition")  # the rows' partitions
    model = {k: r for k, r in model.items() if r[1] != "other"}
    assert ours(t) == sorted(model.values()) == theirs(t)
    assert sorted(last_commit(t)["partitionToReplaceFileIds"]) == ["other"]  # 2024-01-01 holds no group now

    t.write(batch([0, 20], 3, ["2024-01-01", "2024-01-01"]))  # a deleted partition takes rows again
    model.update({r[0]: r for r in rows(batch([0, 20], 3, ["2024-01-01"] * 2), ["id", "dt", "v"])})
    assert ours(t) == sorted(model.values()) == theirs(t)
    assert HudiTable(t.path).to_arrow(as_of=before).num_rows == 16  # time travel to before the drop
    report = validate(t.path)
    assert report["ok"], report["errors"]
    if version >= 8:
        assert listed_partitions(t) == ["2024-01-01", "2024-02-01"]


def test_the_change_feed_reads_the_dropped_rows_as_deletes(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", 9, "SIMPLE")
    first = t.write(batch([0, 1, 2, 3], 1, ["a", "b", "a", "b"]))
    dropped = t.delete_partitions("a")
    changes = [(r["id"], r["_change_type"], r["_commit_time"]) for r in t.changes(first).to_pylist()]
    assert [c for c in changes if c[2] == dropped] == [("k0", "delete", dropped), ("k2", "delete", dropped)]
    assert rows(t.incremental(first), ["id"]) == [("k1",), ("k3",)]


def test_nothing_to_delete_commits_an_empty_replace_and_keeps_every_row(tmp_path):
    t = create(tmp_path / "t", "COPY_ON_WRITE", 9, "SIMPLE")
    t.write(batch([0, 1], 1, ["a", "b"]))
    t.delete_partitions(["c", "a/*"])
    assert last_commit(t)["partitionToReplaceFileIds"] == {}
    assert ours(t) == theirs(t) and len(ours(t)) == 2


def test_a_pending_compaction_of_a_partition_refuses_it_until_it_ran(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", 9, "SIMPLE")
    t.write(batch([0, 1], 1, ["a", "b"]))
    t.write(batch([0, 1], 2, ["a", "b"]))
    compaction = t.schedule_compaction()
    assert compaction is not None
    with pytest.raises(InstantStateError, match=compaction):
        t.delete_partitions("a")
    assert [i.action for i in HudiTable(t.path).timeline()][-1] == "rollback"  # its instant rolled back
    assert rows(HudiTable(t.path).to_arrow(), ["id"]) == [("k0",), ("k1",)]
    t.run_compaction(compaction)
    t.delete_partitions("a")
    assert rows(HudiTable(t.path).to_arrow(), ["id"]) == [("k1",)] == rows(hudi_rs(t.path), ["id"])


def test_bad_calls_are_refused_before_anything_is_written(tmp_path):
    t = create(tmp_path / "t", "COPY_ON_WRITE", 6, "BUCKET")
    with pytest.raises(InvalidDataError, match="no commit with rows"):
        t.delete_partitions("a")
    t.write(batch([0], 1, ["a"]))
    for bad in ([], [""], ["a,b"], [3]):
        with pytest.raises(ConfigError, match="partition paths"):
            t.delete_partitions(bad)  # type: ignore[arg-type]
    with pytest.raises(Exception, match="dt"):
        t.write(pa.table({"id": ["k0"]}), operation="delete_partition")  # no partition column, no option
    assert len(HudiTable(t.path).timeline()) == 1 and ours(t) == theirs(t)


@pytest.mark.parametrize("version", [6, 9])
def test_a_clean_deletes_the_dropped_partitions_once_past_retention(tmp_path, version):
    """CleanPlanner's toDeletePartition: the folder goes with its files, the clean metadata says so, and the
    metadata table forgets the partition; a dropped partition that took rows again stays."""
    t = create(tmp_path / "t", "COPY_ON_WRITE", version, "SIMPLE")
    t.write(batch([0, 1, 2], 1, ["a", "b", "c"]))
    t.delete_partitions(["a", "c"])
    t.write(batch([5], 2, ["c"]))  # c takes rows again
    t.write(batch([1], 3, ["b"]))
    t.write(batch([1], 4, ["b"]))
    cleaned = t.clean(retain_commits=1)
    assert cleaned is not None
    assert not (tmp_path / "t" / "a").exists() and (tmp_path / "t" / "c").is_dir()
    meta = HudiTable(t.path).load_timeline().read_avro(HudiTable(t.path).load_timeline().find(cleaned))
    assert {p: m["isPartitionDeleted"] for p, m in meta["partitionMetadata"].items()} == {"a": True, "b": False,
                                                                                         "c": False}
    assert ours(t) == theirs(t) == [("k1", "b", "1@4"), ("k5", "c", "5@2")]
    report = validate(t.path)
    assert report["ok"], report["errors"]
    if version == 9:
        assert listed_partitions(t) == ["b", "c"]


@pytest.mark.parametrize("name", ["cow_v6_simplekeygen_nonhivestyle", "mor_parquet_v6_complexkeygen_hivestyle",
                                  "mor_avro_v9_txns_simple_overwrite"])
def test_tables_apache_hudi_wrote_take_it(reference_dir, tmp_path, name):
    path = tmp_path / name
    shutil.copytree(reference_dir / name, path)
    t = HudiTable(str(path))
    before = t.to_arrow()
    held = sorted(set(before["_hoodie_partition_path"].to_pylist()))
    gone = held[0]
    t.delete_partitions(gone)
    data = [c for c in before.column_names if not c.startswith("_hoodie")]
    want = rows(before.filter(pc.not_equal(before["_hoodie_partition_path"], gone)), data)
    assert rows(HudiTable(str(path)).to_arrow(), data) == want == rows(hudi_rs(str(path)), data)
    report = validate(str(path))
    assert report["ok"], report["errors"]


@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(steps=st.lists(st.one_of(
    st.tuples(st.just("upsert"), st.lists(st.tuples(st.integers(0, 9), st.sampled_from("abc")), min_size=1,
                                           max_size=6)),
    st.tuples(st.just("drop"), st.lists(st.sampled_from(["a", "b", "c", "*", "x"]), min_size=1, max_size=2))),
    min_size=1, max_size=6))
def test_any_history_of_upserts_and_dropped_partitions_reads_as_the_model(tmp_path_factory, steps):
    t = create(tmp_path_factory.mktemp("h") / "t", "MERGE_ON_READ", 9, "GLOBAL_SIMPLE")
    t.write(batch([9], 0, ["c"]))
    model: dict[str, tuple] = {"k9": ("k9", "c", "9@0")}
    for ts, (kind, arg) in enumerate(steps, start=1):
        if kind == "upsert":
            latest = {i: p for i, p in arg}
            t.write(batch(list(latest), ts, list(latest.values())))
            model.update({f"k{i}": (f"k{i}", p, f"{i}@{ts}") for i, p in latest.items()})
        else:
            t.delete_partitions(arg)
            hit = {"a", "b", "c"} if "*" in arg else set(arg)
            model = {k: r for k, r in model.items() if r[1] not in hit}
        assert ours(t) == sorted(model.values()) == theirs(t)
    assert validate(t.path)["ok"]


def test_on_an_object_store_the_clean_deletes_the_dropped_partition(s3_table):
    """The same on the loopback S3 server: the replacecommit, the metadata table's list, the clean's prefix delete."""
    uri, opts = s3_table
    t = HudiTable.create(uri, table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="COPY_ON_WRITE", storage_options=opts,
                         options={"hoodie.write.table.version": "9", "hoodie.index.type": "SIMPLE"})
    t.write(batch([0, 1, 2], 1, ["a", "b", "c"]))
    t.delete_partitions("a*")
    t.write(batch([1], 2, ["b"]))
    t.write(batch([1], 3, ["b"]))
    assert t.clean(retain_commits=1) is not None
    assert not t.storage.list("a") and t.storage.list("c")
    want = [("k1", "b", "1@3"), ("k2", "c", "2@1")]
    assert rows(HudiTable(uri, storage_options=opts).to_arrow(), ["id", "dt", "v"]) == want
    assert rows(hudi_rs(uri, storage_options=opts), ["id", "dt", "v"]) == want
    assert listed_partitions(t) == ["b", "c"]
