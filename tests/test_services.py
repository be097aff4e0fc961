"""Table services: compaction, cleaning, archiving. The invariant: every service leaves every read it
promises to keep (snapshot, read-optimized after compaction, time travel in the retained window,
incremental) exactly as it was, in our reader and in hudi-rs."""

from __future__ import annotations

import threading
from pathlib import Path

import fastavro
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import commit_metadata, hudi_rs, instant_file, rows

from hudi_ds import HudiTable, faults
from hudi_ds.cli.validate import validate
from hudi_ds.errors import CommitConflictError, ConfigError
from hudi_ds.files.base_file import few_valued_strings
from hudi_ds.files.naming import parse_base_file, parse_log_file
from hudi_ds.services.archive import archive, read_archived
from hudi_ds.services.clean import clean
from hudi_ds.services.compaction import CompactionRunner, compact, run_compaction, schedule_compaction
from hudi_ds.write.commit import Coordinator

COLS = ["id", "ts", "dt", "v", "_hoodie_record_key", "_hoodie_partition_path"]


def data(ids, ts, v=1.0):
    ids = list(ids)
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 2}" for i in ids],
                     "v": [float(i) * v for i in ids]})


def deletes(ids):
    ids = list(ids)
    return pa.table({"id": [f"k{i}" for i in ids], "dt": [f"d{i % 2}" for i in ids]})


def snap(t: HudiTable, **kw):
    return rows(t.to_arrow(**kw), COLS)


def theirs(t: HudiTable, **kw):
    return rows(hudi_rs(t.path, **kw), COLS)


def data_files(t: HudiTable) -> set[str]:
    root = Path(t.path)
    return {str(p.relative_to(root)) for p in root.rglob("*")
            if p.is_file() and ".hoodie" not in p.parts and not p.name.startswith(".hoodie_partition")}


def timeline_files(t: HudiTable) -> set[str]:
    return {p.name for p in (Path(t.path) / t.config.format.timeline_dir).iterdir() if p.is_file()}


def avro_record(path: Path) -> dict:
    with open(path, "rb") as f:
        return next(iter(fastavro.reader(f)))


# the services are called by hand in these tests: none runs by itself after a write
MANUAL = {"compaction.schedule.enabled": "false", "hoodie.clean.automatic": "false",
          "hoodie.archive.automatic": "false"}


@pytest.fixture(params=[6, 9], ids=["v6", "v9"])
def mor(tmp_path, request):
    """A MOR table (version 6 and 9) with inserts, upserts and deletes spread over two partitions and two buckets
    each."""
    t = HudiTable.create(str(tmp_path / "mor"), table_name="mor", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=2,
                         options={**MANUAL, "hoodie.write.table.version": str(request.param)})
    t.write(data(range(40), 1))
    t.write(data(range(10, 30), 2, v=2.0))
    t.write(deletes([3, 4, 11, 12]), operation="delete")
    t.write(data(range(35, 50), 3, v=3.0))
    return t


# --- compaction --------------------------------------------------------------------------------------------


def test_compaction_writes_few_valued_columns_as_read(tmp_path):
    """A base file big enough that its few-valued strings (meta columns, `dt`, `flag`) are read as dictionaries:
    the compaction keeps them so, the log rows joining them are encoded alike, and every reader sees the same
    strings before and after."""
    t = HudiTable.create(str(tmp_path / "big"), table_name="big", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=2, options=MANUAL)
    n = 3000

    def batch(ids, ts):
        flags = ["on", "off", None] if ts == 1 else ["on", "new", None]
        return pa.table({"id": pa.array(ids, pa.int64()), "ts": [ts] * len(ids),
                         "dt": [f"d{i % 2}" for i in ids], "flag": [flags[i % 3] for i in ids],
                         "v": [float(i * ts) for i in ids]})

    t.write(batch(list(range(n)), 1), operation="bulk_insert")
    t.write(batch(list(range(0, n + 500, 7)), 2))  # updates and new keys, a flag value the base lacks
    t.write(pa.table({"id": pa.array(range(1, 300, 5), pa.int64()), "dt": [f"d{i % 2}" for i in range(1, 300, 5)]}),
            operation="delete")
    cols = ["id", "ts", "dt", "flag", "v"]
    before = rows(t.to_arrow(), cols)
    assert rows(hudi_rs(t.path), cols) == before
    (c,) = compact(t)
    assert rows(t.to_arrow(), cols) == before
    assert rows(hudi_rs(t.path), cols) == before
    assert rows(t.to_arrow(read_optimized=True), cols) == before
    for rel in (p for p in data_files(t) if p.endswith(f"_{c}.parquet")):
        table = pq.read_table(Path(t.path) / rel)
        assert table.schema.field("flag").type == pa.string() and table.schema.field("dt").type == pa.string()
        # written as dictionaries throughout: parquet falls back to PLAIN when a column's dictionary changes
        # between chunks (base rows, then log rows)
        few = few_valued_strings(pq.read_metadata(Path(t.path) / rel))
        assert {"_hoodie_commit_time", "_hoodie_partition_path", "_hoodie_file_name", "dt", "flag"} <= set(few), few
        assert set(table["_hoodie_file_name"].to_pylist()) == {rel.split("/")[-1]}
        assert set(table["_hoodie_partition_path"].to_pylist()) == {rel.split("/")[0]}


@pytest.mark.parametrize("partial", [False, True])
def test_compaction_keeps_the_base_files_row_order(tmp_path, partial):
    """As Hudi's merge handle writes a compaction: an updated row stays where its base row was, deleted rows go,
    new keys follow in log order (a file in key order stays so). It used to move every updated row to the end."""
    options = dict(MANUAL, **({"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.write.table.version": "9",
                               "hoodie.table.partial.update.mode": "KEEP_VALUES"} if partial else {}))
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", buckets=2, options=options,
                         **({} if partial else {"ordering_field": "ts"}))
    n = 400
    t.write(pa.table({"id": pa.array(range(n), pa.int64()), "ts": [1] * n, "v": [0.0] * n}), operation="bulk_insert")
    old = {parse_base_file("", Path(p).name).file_id: pq.read_table(Path(t.path) / p)["id"].to_pylist()
           for p in data_files(t) if p.endswith(".parquet")}
    updated = list(range(n - 3, n + 40, 3))  # keys near the end of the base (the old order moved them last anyway)
    updated += list(range(5, 60, 4))  # and near its start
    t.write(pa.table({"id": pa.array(updated, pa.int64()), "v": [float(i) for i in updated]}
                     | ({} if partial else {"ts": pa.array([2] * len(updated), pa.int64())})))
    gone = list(range(9, 90, 10))
    t.write(pa.table({"id": pa.array(gone, pa.int64())}), operation="delete")
    before = rows(t.to_arrow(), ["id", "ts", "v"])
    (c,) = compact(t)
    assert rows(t.to_arrow(), ["id", "ts", "v"]) == before
    assert rows(hudi_rs(t.path), ["id", "ts", "v"]) == before
    for rel in (p for p in data_files(t) if p.endswith(f"_{c}.parquet")):
        keys = pq.read_table(Path(t.path) / rel)["id"].to_pylist()
        kept = [k for k in old[parse_base_file("", Path(rel).name).file_id] if k not in gone]
        assert keys[:len(kept)] == kept
        assert keys[len(kept):] == sorted(k for k in updated if k >= n and k in keys)


def test_compaction_of_a_base_out_of_key_order_puts_the_log_rows_last(tmp_path):
    """A base file out of key order has no order to keep: its rows that stay come first, then the log's rows
    (updated and new keys) in log order, without the copy that would put updated rows in place. The rows read the
    same, here and in hudi-rs."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts", buckets=2,
                         options=MANUAL)
    n = 400
    ids = [i * 7 % n for i in range(n)]  # a permutation: no file group holds its keys in order
    t.write(pa.table({"id": pa.array(ids, pa.int64()), "ts": [1] * n, "v": [0.0] * n}), operation="bulk_insert")
    old = {parse_base_file("", Path(p).name).file_id: pq.read_table(Path(t.path) / p)["id"].to_pylist()
           for p in data_files(t) if p.endswith(".parquet")}
    assert all(keys != sorted(keys) for keys in old.values())
    updated = list(range(5, 60, 4)) + list(range(n, n + 12))
    t.write(pa.table({"id": pa.array(updated, pa.int64()), "ts": pa.array([2] * len(updated), pa.int64()),
                      "v": [float(i) for i in updated]}))
    before = rows(t.to_arrow(), ["id", "ts", "v"])
    (c,) = compact(t)
    assert rows(t.to_arrow(), ["id", "ts", "v"]) == before
    assert rows(hudi_rs(t.path), ["id", "ts", "v"]) == before
    for rel in (p for p in data_files(t) if p.endswith(f"_{c}.parquet")):
        keys = pq.read_table(Path(t.path) / rel)["id"].to_pylist()
        kept = [k for k in old[parse_base_file("", Path(rel).name).file_id] if k not in updated]
        assert keys[:len(kept)] == kept
        assert set(keys[len(kept):]) <= set(updated) and len(keys) > len(kept)


def test_compaction_keeps_every_read(mor):
    commits = [i.requested_time for i in mor.timeline()]
    before = snap(mor)
    assert theirs(mor) == before
    at_second = snap(mor, as_of=commits[1])
    incremental = rows(mor.incremental(commits[0]), COLS)
    assert snap(mor, read_optimized=True) != before  # logs hold updates and deletes

    done = compact(mor, row_group_rows=4)
    assert len(done) == 1
    c = done[0]
    assert c > commits[-1]
    assert snap(mor) == before
    assert theirs(mor) == before
    assert snap(mor, read_optimized=True) == before
    assert theirs(mor, read_optimized=True) == before
    assert snap(mor, as_of=commits[1]) == at_second  # time travel to before the compaction
    assert rows(mor.incremental(commits[0]), COLS) == incremental
    # the compaction itself changed no record (incremental ranges go by completion time on version 8+)
    last = mor.timeline()[len(commits) - 1]
    assert mor.incremental(last.completion_time or last.requested_time).num_rows == 0

    assert {f"{c}.compaction.requested", f"{c}.compaction.inflight"} <= timeline_files(mor)
    assert instant_file(mor, c, "compaction", "inflight").stat().st_size == 0
    plan = avro_record(instant_file(mor, c, "compaction", "requested"))
    assert plan["version"] == 2 and len(plan["operations"]) == 4
    for op in plan["operations"]:
        assert op["deltaFilePaths"] and all(n.startswith(f".{op['fileId']}_") for n in op["deltaFilePaths"])
        assert op["dataFilePath"].startswith(op["fileId"]) and op["baseInstantTime"] == commits[0]
        assert op["metrics"]["TOTAL_LOG_FILES"] == len(op["deltaFilePaths"])
    meta = commit_metadata(mor, c, "commit")
    assert meta["compacted"] is True and meta["operationType"] == "COMPACT"
    latest = commit_metadata(mor, commits[-1], "deltacommit")
    assert meta["extraMetadata"]["schema"] == latest["extraMetadata"]["schema"]
    stats = [s for ss in meta["partitionToWriteStats"].values() for s in ss]
    assert len(stats) == 4 and all(s["prevCommit"] == commits[0] for s in stats)
    assert sum(s["numWrites"] for s in stats) == len(before)
    assert all(s["totalLogFilesCompacted"] >= 1 and s["totalLogBlocks"] >= 1 for s in stats)
    assert sum(s["numDeletes"] for s in stats) == 4
    # base 0-39; logs: 10-29 updated, 3, 4, 11, 12 deleted, 35-39 updated, 40-49 inserted
    assert sum(s["numUpdateWrites"] for s in stats) == 20 + 5 - 2  # 11 and 12 are deleted, not updated
    assert sum(s["numInserts"] for s in stats) == 10
    assert sum(s["totalUpdatedRecordsCompacted"] for s in stats) == 20 + 2 + 15

    new_bases = [p for p in data_files(mor) if p.endswith(f"_{c}.parquet")]
    assert len(new_bases) == 4  # one base file per file group
    for rel in new_bases:
        f = pq.ParquetFile(Path(mor.path) / rel)
        table = f.read()
        assert set(table["_hoodie_file_name"].to_pylist()) == {rel.split("/")[-1]}
        assert c not in set(table["_hoodie_commit_time"].to_pylist())  # commit times are kept
        assert f.metadata.num_row_groups == -(-table.num_rows // 4)
        keys = sorted(table["_hoodie_record_key"].to_pylist())
        assert f.metadata.metadata[b"hoodie_min_record_key"] == keys[0].encode()

    assert compact(mor) == []  # nothing left to compact


def test_writes_while_a_compaction_is_pending_are_not_lost(mor):
    c = schedule_compaction(mor)
    assert c is not None
    assert schedule_compaction(mor) is None  # every file group is already planned
    files_before = data_files(mor)
    w = mor.write(data(range(20, 45), 4, v=4.0))  # lands between schedule and run
    at_w = snap(mor, as_of=w)
    mor.write(deletes([21]), operation="delete")
    expected = snap(mor)
    assert ("k22", 4, "d0", 88.0, "k22", "d0") in expected and not any(r[0] == "k21" for r in expected)
    new_logs = [parse_log_file(*p.rsplit("/", 1)) for p in data_files(mor) - files_before]
    # the upsert hit all four file groups, the delete one: every log went to C's new slice (v6: named after C;
    # v8+: named after its own delta commit, which completed after C was planned)
    v6 = mor.config.version == 6
    assert len(new_logs) == 5 and all(lf is not None and lf.instant == (c if v6 else lf.instant) for lf in new_logs)
    assert v6 or all(lf is not None and lf.instant > c for lf in new_logs)

    assert run_compaction(mor) == [c]
    assert snap(mor) == expected
    assert theirs(mor) == expected  # hudi-rs: C's base file plus the logs of C's slice
    assert snap(mor, as_of=w) == at_w == theirs(mor, as_of=w)  # C < w: C's slice, blocks up to w
    assert snap(mor, read_optimized=True) != expected  # those logs are not compacted yet

    last = mor.write(data([22], 5, v=5.0))  # the next log of the group follows the earlier ones of C's slice
    if v6:
        after = [p for p in data_files(mor) if f"_{c}.log." in p]
        assert len(after) == 6 and sum(".log.2_" in p for p in after) == 2
    else:
        assert len([p for p in data_files(mor) if f"_{last}.log.1_" in p]) == 1
    expected = [r if r[0] != "k22" else ("k22", 5, "d0", 110.0, "k22", "d0") for r in expected]
    assert snap(mor) == expected and theirs(mor) == expected
    assert compact(mor) and snap(mor, read_optimized=True) == expected == theirs(mor)


def test_failed_compaction_leaves_reads_unchanged_and_reruns(mor):
    before = snap(mor)
    files_before = data_files(mor)
    c = schedule_compaction(mor)
    faults.fail_after(1)
    try:
        with pytest.raises(faults.InjectedFault):
            run_compaction(mor)
    finally:
        faults.fail_after(None)
    assert any(p.endswith(f"_{c}.parquet") for p in data_files(mor))  # a partial result
    assert f"{c}.compaction.inflight" in timeline_files(mor)
    assert not any(n.startswith(c) and n.endswith(".commit") for n in timeline_files(mor))
    assert snap(mor) == before
    assert theirs(mor) == before

    assert run_compaction(mor) == [c]
    assert snap(mor) == before == theirs(mor)
    assert snap(mor, read_optimized=True) == before
    new = data_files(mor) - files_before
    assert len(new) == 4 and all(p.endswith(f"_{c}.parquet") for p in new)  # the partial file is gone
    rollbacks = [i for i in mor.timeline() if i.action == "rollback"]
    assert len(rollbacks) == 1
    rb = avro_record(instant_file(mor, rollbacks[0].requested_time, "rollback"))
    assert rb["instantsRollback"] == [{"commitTime": c, "action": "compaction"}]
    assert not (Path(mor.path) / ".hoodie" / ".temp" / c).exists()


def test_compaction_runs_in_the_background_while_writes_continue(mor):
    c = schedule_compaction(mor)
    errors: list[BaseException] = []
    runner = CompactionRunner(mor, on_error=errors.append)
    stop = threading.Event()

    def write_loop():
        ts = 10
        while not stop.is_set() and ts < 40:
            try:
                mor.write(data(range(ts % 7, 50, 7), ts, v=float(ts)))
            except CommitConflictError:
                continue  # the compaction completed meanwhile: safe to retry
            ts += 1

    writer = threading.Thread(target=write_loop)
    writer.start()
    runner.trigger()
    assert runner.wait(timeout=60)
    stop.set()
    writer.join()
    assert errors == [] and runner.completed == [c]
    expected = snap(mor)
    assert theirs(mor) == expected
    assert compact(mor) and snap(mor) == expected == snap(mor, read_optimized=True)


def test_compaction_needs_merge_on_read_and_enough_delta_commits(tmp_path, mor):
    cow = HudiTable.create(str(tmp_path / "cow"), table_name="cow", record_key="id", ordering_field="ts",
                           table_type="COPY_ON_WRITE", options=MANUAL)
    cow.write(data(range(3), 1))
    with pytest.raises(ConfigError, match="MERGE_ON_READ"):
        compact(cow)
    assert schedule_compaction(mor, min_delta_commits=5) is None
    assert schedule_compaction(mor, min_delta_commits=4) is not None


# --- cleaning ----------------------------------------------------------------------------------------------


def test_clean_deletes_old_slices_and_keeps_the_retained_window(mor):
    for round_ in range(3):  # compactions stack old slices
        mor.write(data(range(round_, 50, 3), 10 + round_, v=10.0 + round_))
        compact(mor)
    mor.write(data(range(0, 50, 5), 20, v=20.0))
    commits = [i.requested_time for i in mor.timeline() if i.is_completed and i.action != "rollback"]
    recorded = {c: snap(mor, as_of=c) for c in commits}
    before, files_before = snap(mor), data_files(mor)
    pending = schedule_compaction(mor)  # its input slices must survive the clean

    t = clean(mor, retain_commits=3)
    assert t is not None
    removed = files_before - data_files(mor)
    assert removed and all(parse_base_file(*p.rsplit("/", 1)) or parse_log_file(*p.rsplit("/", 1))
                           for p in removed)
    assert snap(mor) == before == theirs(mor)
    for c in commits[-3:]:
        assert snap(mor, as_of=c) == recorded[c]
    assert theirs(mor, as_of=commits[-3]) == recorded[commits[-3]]

    plan = avro_record(instant_file(mor, t, "clean", "requested"))
    assert plan["policy"] == "KEEP_LATEST_COMMITS"
    assert plan["earliestInstantToRetain"]["timestamp"] == commits[-3]
    planned = {Path(i["filePath"]).relative_to(Path(mor.path).resolve()).as_posix()
               for infos in plan["filePathsToBeDeletedPerPartition"].values() for i in infos}
    assert planned == removed
    assert avro_record(instant_file(mor, t, "clean", "inflight")) == plan
    meta = avro_record(instant_file(mor, t, "clean"))
    assert meta["totalFilesDeleted"] == len(removed) and meta["earliestCommitToRetain"] == commits[-3]
    deleted = {(pm["partitionPath"], n) for pm in meta["partitionMetadata"].values()
               for n in pm["successDeleteFiles"]}
    assert deleted == {tuple(p.rsplit("/", 1)) for p in removed}
    assert all(not pm["failedDeleteFiles"] for pm in meta["partitionMetadata"].values())

    assert run_compaction(mor) == [pending]  # the planned slices were kept
    assert snap(mor) == before == theirs(mor)
    assert clean(mor, retain_commits=3) is None  # the window did not move: nothing more to delete
    mor.write(data(range(0, 50, 4), 30, v=30.0))
    after = snap(mor)
    assert clean(mor, retain_commits=3) is not None
    assert snap(mor) == after == theirs(mor)
    assert clean(mor, retain_commits=3) is None


def test_clean_copy_on_write_versions(tmp_path):
    t = HudiTable.create(str(tmp_path / "cow"), table_name="cow", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="COPY_ON_WRITE", buckets=2, options=MANUAL)
    for ts in range(1, 6):
        t.write(data(range(0, 20, ts), ts, v=float(ts)))
    before, files = snap(t), data_files(t)
    earliest = [i.requested_time for i in t.timeline() if i.action == "commit"][-2]
    versions: dict[str, list[str]] = {}
    for f in files:
        base = parse_base_file(*f.rsplit("/", 1))
        versions.setdefault(base.file_id, []).append(base.instant)
    kept = set()  # per file group: every version >= E, the newest one before E, the latest
    for fid, vs in versions.items():
        vs.sort()
        kept |= {(fid, v) for v in vs if v >= earliest} | {(fid, vs[-1])}
        kept |= {(fid, max(v for v in vs if v < earliest))} if vs[0] < earliest else set()
    assert clean(t, retain_commits=2) is not None
    left = {(b.file_id, b.instant) for f in data_files(t) if (b := parse_base_file(*f.rsplit("/", 1)))}
    assert left == kept and len(left) < len(files)
    assert snap(t) == before == theirs(t)
    assert snap(t, as_of=earliest) == theirs(t, as_of=earliest)


# --- archiving ---------------------------------------------------------------------------------------------


def without_metadata_table(t: HudiTable) -> HudiTable:
    """The table after a write with hoodie.metadata.enable=false dropped its metadata table (on by default on
    version 9), whose deltacommits not yet compacted hold archiving back, as Hudi's archiver does
    (test_metadata_table covers archiving with one)."""
    return HudiTable(t.path, options={**MANUAL, "hoodie.metadata.enable": "false"})


def test_archive_moves_old_instants_and_keeps_reads(mor):
    mor = without_metadata_table(mor)
    for ts in range(10, 22):
        mor.write(data(range(ts % 5, 50, 5), ts, v=float(ts)))
        if ts % 4 == 0:
            compact(mor)
    before = snap(mor)
    active_before = mor.timeline()
    assert archive(mor, min_commits=4, max_commits=30) == []  # not over the limit yet

    archived = archive(mor, min_commits=4, max_commits=8)
    assert archived
    active = mor.timeline()
    assert len(active) < len(active_before) and min(i.requested_time for i in active) > max(archived)
    assert len([i for i in active if i.is_completed and i.action != "rollback"]) == 4
    assert snap(mor) == before == theirs(mor)
    assert snap(mor, read_optimized=True) == theirs(mor, read_optimized=True)
    gone = {i.requested_time for i in active_before} - {i.requested_time for i in active}
    if mor.config.version == 6:
        names = [p.name for p in (Path(mor.path) / ".hoodie" / "archived").iterdir()]
        assert names == [".commits_.archive.1_1-0-1"]
        records = list(read_archived(mor.storage))
        assert {r["commitTime"] for r in records} == gone == set(archived)
        assert {r["actionType"] for r in records} >= {"deltacommit", "commit", "compaction"}
        completed = [r for r in records if r["actionState"] == "COMPLETED" and r["actionType"] == "deltacommit"]
        assert completed and all(r["hoodieCommitMetadata"]["partitionToWriteStats"] for r in completed)
        assert all(r["hoodieCompactionPlan"]["operations"] for r in records
                   if r["actionType"] == "compaction" and r["actionState"] == "REQUESTED")
    else:  # the LSM history: one row per completed instant, its metadata and its plan
        history = _history(mor)
        assert {i.requested_time for i in history.instants} == gone == set(archived)
        deltas = [i for i in history.commits() if i.action == "deltacommit"]
        assert deltas and all(history.commit_metadata(i).partition_to_write_stats for i in deltas)
        assert {i.action for i in history.instants} >= {"deltacommit", "commit"}
        by_name = {p.name for p in (Path(mor.path) / mor.config.format.archive_dir).iterdir()}
        assert {"_version_", "manifest_1"} <= by_name and any(n.endswith("_0.parquet") for n in by_name)

    mor.write(data(range(5), 30, v=30.0))  # the table stays writable and readable after archiving
    assert snap(mor) == theirs(mor)
    assert archive(mor, min_commits=2, max_commits=3)
    if mor.config.version == 6:
        assert sorted(p.name for p in (Path(mor.path) / ".hoodie" / "archived").iterdir()) == [
            ".commits_.archive.1_1-0-1", ".commits_.archive.2_1-0-1"]
    else:
        assert len(_history(mor).instants) > len(gone)
    assert snap(mor) == theirs(mor)


def _history(t: HudiTable):
    from hudi_ds.timeline.archived import ArchivedTimeline

    return ArchivedTimeline.load(t.storage, t.config.format.layout, t.config.format.archive_dir)


def test_archive_stops_at_pending_instants_and_the_clean_window(mor):
    coordinator = Coordinator(mor.storage, mor.config)
    plan = coordinator.begin("upsert", mor.schema)  # a write in flight (fresh heartbeat: not rolled back)
    for ts in range(10, 20):
        mor.write(data(range(ts % 5, 50, 5), ts, v=float(ts)))
    before = snap(mor)
    archived = archive(mor, min_commits=2, max_commits=4)
    assert archived and max(archived) < plan.instant
    assert mor.timeline()[0].requested_time == plan.instant
    assert archive(mor, min_commits=2, max_commits=4) == []
    coordinator.abort(plan)

    assert compact(mor)
    for ts in range(20, 27):
        mor.write(data(range(ts % 5, 50, 5), ts, v=float(ts)))
    before = snap(mor)
    assert clean(mor, retain_commits=6) is not None
    retained = [i.requested_time for i in mor.timeline() if i.action == "deltacommit"][-6]
    archived = archive(mor, min_commits=2, max_commits=4)
    assert archived and max(archived) < retained
    assert mor.timeline()[0].requested_time == retained
    assert snap(mor) == before == theirs(mor)
    for c in [i.requested_time for i in mor.timeline() if i.action == "deltacommit"]:
        assert snap(mor, as_of=c) == theirs(mor, as_of=c)

    c = schedule_compaction(mor)
    for ts in range(30, 35):
        mor.write(data(range(ts % 5, 50, 5), ts, v=float(ts)))
    archive(mor, min_commits=2, max_commits=4)
    assert mor.timeline()[0].requested_time <= c  # a pending compaction is never archived
    assert run_compaction(mor) == [c]
    assert snap(mor) == theirs(mor)


def test_archive_never_passes_a_pending_compaction(mor):
    mor = without_metadata_table(mor)
    c = schedule_compaction(mor)
    for ts in range(10, 18):
        mor.write(data(range(ts % 5, 50, 5), ts, v=float(ts)))
    before = snap(mor)
    archived = archive(mor, min_commits=2, max_commits=4)
    assert archived and max(archived) < c and mor.timeline()[0].requested_time == c
    assert snap(mor) == before == theirs(mor)
    assert run_compaction(mor) == [c]
    assert snap(mor) == before == theirs(mor)
    assert max(archive(mor, min_commits=2, max_commits=4)) >= c
    assert snap(mor) == before == theirs(mor)


def test_crashed_compaction_waits_for_its_heartbeat_or_is_rolled_back_at_once(mor, capsys):
    """A compaction killed while its heartbeat is fresh is left alone for hoodie.client.heartbeat.timeout.secs;
    `hudi-py rollback --force` (or a shorter timeout) takes it over at once."""
    from hudi_ds.cli import main as cli_main
    from hudi_ds.recovery.heartbeat import touch_heartbeat

    before = snap(mor)
    c = schedule_compaction(mor)
    faults.fail_after(1)
    try:
        with pytest.raises(faults.InjectedFault):
            run_compaction(mor)
    finally:
        faults.fail_after(None)
    touch_heartbeat(mor.storage, c)  # as if its process were still alive somewhere
    assert HudiTable(mor.path, options=MANUAL).run_compaction() == []  # a live executor's plan is left alone
    assert cli_main(["rollback", mor.path, c]) == 1
    assert "may still be running" in capsys.readouterr().err
    assert HudiTable(mor.path, options={**MANUAL, "hoodie.client.heartbeat.timeout.secs": 0}).run_compaction() == [c]
    assert snap(mor) == before == theirs(mor)

    mor.write(data([1], 9, v=9.0))
    c2 = schedule_compaction(mor)
    touch_heartbeat(mor.storage, c2)
    assert cli_main(["rollback", mor.path, c2, "--force"]) == 0
    assert f"{c2}.compaction.requested" not in timeline_files(mor)


def test_an_executor_taken_over_for_dead_never_publishes(mor, monkeypatch):
    """Executor A looks dead (its heartbeat expired) but is only slow: B takes the plan over and completes it.
    When A wakes up it must neither publish nor leave files behind (hudi-rs lists files): not the base file it
    had written, not those of its slices that run after B completed, nor their markers; and a slice that then
    fails (B removing the marker directory under a marker being written) is part of losing the plan, not an
    error."""
    from hudi_ds.services import compaction

    before = snap(mor)
    c = schedule_compaction(mor)
    real, reached, release = compaction.compact_slice, threading.Event(), threading.Event()
    calls_of_a = []

    def slow(storage, *args, **kwargs):
        if storage is not mor.storage:  # executor B
            return real(storage, *args, **kwargs)
        calls_of_a.append(1)
        if len(calls_of_a) > 1:  # A's other slices: after B completed the plan
            assert release.wait(60)
            if len(calls_of_a) == 2:
                raise FileNotFoundError("the marker directory went away under this write")
            return real(storage, *args, **kwargs)
        out = real(storage, *args, **kwargs)
        reached.set()
        assert release.wait(60)
        return out

    monkeypatch.setattr(compaction, "compact_slice", slow)
    done: dict[str, list[str]] = {}
    a = threading.Thread(target=lambda: done.setdefault("a", run_compaction(mor)))
    a.start()
    assert reached.wait(60)
    # as another process would: its own in-process executor lock, and a zero heartbeat timeout
    monkeypatch.setattr(compaction, "_run_lock", lambda storage: threading.Lock())
    b = HudiTable(mor.path, options={**MANUAL, "hoodie.client.heartbeat.timeout.secs": 0})
    assert b.run_compaction() == [c]
    release.set()
    a.join(60)
    assert done["a"] == [] and len(calls_of_a) == 4  # two partitions x two buckets
    assert not (Path(mor.path) / ".hoodie" / ".temp" / c).exists()
    new_bases = [f for f in data_files(mor) if (base := parse_base_file(*f.rpartition("/")[::2])) is not None
                 and base.instant == c]
    assert len(new_bases) == len({parse_base_file(*f.rpartition("/")[::2]).file_id for f in new_bases})
    assert snap(mor) == before == theirs(mor)
    assert validate(mor)["ok"]


def test_a_live_executors_plan_is_left_to_it(mor, monkeypatch):
    """The post-commit services of a second writer find a plan another executor holds (fresh heartbeat)
    and leave it alone, instead of reverting the files it is writing."""
    from hudi_ds.recovery.heartbeat import touch_heartbeat
    from hudi_ds.storage.layout import executor_path

    c = schedule_compaction(mor)
    mor.storage.write_bytes(executor_path(c), b"someone")
    mor.config.format.timeline_writer(mor.storage).transition_to_inflight(c, "compaction")
    touch_heartbeat(mor.storage, c)
    writer = HudiTable(mor.path, options={"compaction.delta_commits": "1", "hoodie.clean.automatic": "false",
                                          "hoodie.archive.automatic": "false"})
    writer.write(data([1], 9, v=9.0))
    assert f"{c}.compaction.inflight" in timeline_files(mor)
    assert mor.storage.read_bytes(executor_path(c)) == b"someone"


def test_a_read_whose_timeline_went_stale_plans_again(mor):
    """A read that loaded the timeline before a compaction and a clean finished finds the cleaned slice's
    files gone: it plans again on the new timeline. A file missing from an unchanged timeline is lost."""
    from hudi_ds import MissingFileError
    from hudi_ds.read import query
    from hudi_ds.timeline.moving import on_latest_timeline

    stale = mor.load_timeline()
    before = snap(mor)
    compact(mor)
    mor.write(data([1], 9, v=9.0))
    assert clean(mor, retain_commits=1) is not None
    after = snap(mor)
    snapshot_at = lambda timeline: query.snapshot(query.TableSnapshot(mor.storage, mor.config, timeline))  # noqa: E731
    with pytest.raises(MissingFileError):
        snapshot_at(stale)
    loads = iter([stale])
    assert rows(on_latest_timeline(lambda: next(loads, None) or mor.load_timeline(), snapshot_at), COLS) == after
    assert after != before
    victim = sorted(f for f in data_files(mor) if f.endswith(".parquet"))[0]
    (Path(mor.path) / victim).unlink()
    with pytest.raises(MissingFileError, match="missing"):
        mor.to_arrow()


def test_archive_finishes_the_work_of_an_archiver_killed_midway(mor):
    """An archiver deletes the pending-state files of the instants it archived first; killed then, it leaves
    completed cleans without their requested plan. The next archive must archive them all the same."""
    for ts in range(10, 20):
        mor.write(data(range(ts % 5, 50, 5), ts, v=float(ts)))
        compact(mor)
        clean(mor, retain_commits=2)
    cleans = sorted(i.requested_time for i in mor.timeline() if i.action == "clean")
    assert cleans
    instant_file(mor, cleans[0], "clean", "requested").unlink()
    before = snap(mor)
    archived = archive(mor, min_commits=2, max_commits=4)
    assert cleans[0] in archived
    if mor.config.version == 6:
        plans = [r for r in read_archived(mor.storage)
                 if r["commitTime"] == cleans[0] and r["actionType"] == "clean"]
        assert {r["actionState"] for r in plans} == {"INFLIGHT", "COMPLETED"}
        assert [r["hoodieCleanerPlan"] is not None for r in plans if r["actionState"] == "INFLIGHT"] == [True]
    else:
        history = _history(mor)
        archived_clean = next(i for i in history.instants if i.requested_time == cleans[0])
        assert history.read_avro(archived_clean)["totalFilesDeleted"] >= 0
    assert snap(mor) == before == theirs(mor)
