"""The archived timeline of both layouts: v6 archive log files and the v8/v9 LSM history (read and written).

Layout 2 has no writer in hudi_ds yet, so Hudi 1.x archiving is reproduced on copies of reference tables Apache
Hudi wrote: their oldest instants move into the history as Java's LSMTimelineWriter stores them, and every read
must answer as it did before (and as hudi-rs answers on the untouched table)."""

from __future__ import annotations

import json
import posixpath
import shutil

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.errors import CorruptTableError
from hudi_ds.storage import open_storage
from hudi_ds.timeline import Timeline, parse_instant_file_name
from hudi_ds.timeline.archived import ArchivedTimeline, read_archived, with_history
from hudi_ds.timeline.avro_models import encode_avro_instant
from hudi_ds.timeline.avro_schemas import COMMIT_METADATA
from hudi_ds.timeline.lsm_history import LSM_INSTANT_SCHEMA, append_history, history_row, rows_from_archived

HISTORY = ".hoodie/timeline/history"
SCHEMA = pa.schema([("id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


def _archived_v6_table(path, commits: int = 8):
    """A v6 table whose first commits (and a clean) were archived; the metadata of every commit, read before."""
    t = HudiTable.create(str(path), table_name="a", record_key="id", ordering_field="ts", partition_by="dt",
                         buckets=1, table_type="COPY_ON_WRITE",
                         options={"hoodie.keep.min.commits": 2, "hoodie.keep.max.commits": 3,
                                  "hoodie.cleaner.commits.retained": 1})
    metadata = {}
    for n in range(commits):
        ts = t.write(pa.Table.from_pylist([{"id": f"k{n}", "dt": str(n % 2), "ts": n, "v": n}], schema=SCHEMA))
        tl = t.load_timeline()
        metadata[ts] = tl.commit_metadata(tl.get(ts)).to_json_dict()
    return t, metadata


def test_layout1_archive_reads_back_every_commit_and_its_metadata(tmp_path):
    t, metadata = _archived_v6_table(tmp_path / "t")
    archived = ArchivedTimeline.load(t.storage, 1, ".hoodie/archived")
    commits = {i.requested_time: i for i in archived.commits()}
    assert commits and set(commits) < set(metadata)
    assert {i.action for i in archived.instants} >= {"commit", "clean"}
    for ts, inst in commits.items():
        assert archived.commit_metadata(inst).to_json_dict() == metadata[ts]
    full = with_history(t.load_timeline())
    assert [i.requested_time for i in full.commits()] == sorted(metadata)


def test_v6_archive_converts_to_lsm_history_with_the_same_commits(tmp_path):
    t, metadata = _archived_v6_table(tmp_path / "t")
    rows_ = rows_from_archived(read_archived(t.storage))
    assert all(r["metadata"] for r in rows_) and {r["action"] for r in rows_} >= {"commit", "clean"}
    assert any(r["plan"] for r in rows_ if r["action"] == "clean")  # the cleaner plan travels along
    append_history(t.storage, HISTORY, rows_)
    layout2 = ArchivedTimeline.load(t.storage, 2, HISTORY)
    layout1 = ArchivedTimeline.load(t.storage, 1, ".hoodie/archived")
    assert [(i.requested_time, i.action) for i in layout2.instants] == [
        (i.requested_time, i.action) for i in layout1.instants if i.is_completed]
    for inst in layout2.commits():
        assert layout2.commit_metadata(inst).to_json_dict() == metadata[inst.requested_time]


def _commit_row(ts: str, path: str = "p/f1_0-1-0_{ts}.parquet") -> dict:
    record = {"partitionToWriteStats": {"p": [{"fileId": "f1", "path": path.format(ts=ts), "numWrites": 1}]},
              "extraMetadata": {"schema": "{}"}, "operationType": "UPSERT", "compacted": False, "version": 1}
    return history_row(ts, str(int(ts) + 5), "commit", encode_avro_instant(record, COMMIT_METADATA))


def test_history_files_are_laid_out_as_hudis_lsm_timeline_writer_does(tmp_path):
    storage = open_storage(str(tmp_path))
    name = append_history(storage, HISTORY, [_commit_row("20260101000000200"), _commit_row("20260101000000100")])
    assert name == "20260101000000100_20260101000000200_0.parquet"
    assert (tmp_path / HISTORY / "_version_").read_text() == "1"
    manifest = json.loads((tmp_path / HISTORY / "manifest_1").read_text())
    size = (tmp_path / HISTORY / name).stat().st_size
    assert manifest == {"files": [{"fileName": name, "fileLen": size}]}
    assert (tmp_path / HISTORY / "manifest_1").read_text().startswith('{\n  "files" : [ {\n    "fileName" : ')
    footer = pq.ParquetFile(tmp_path / HISTORY / name)
    avro = json.loads(footer.metadata.metadata[b"parquet.avro.schema"])
    assert avro == LSM_INSTANT_SCHEMA and avro["name"] == "HoodieLSMTimelineInstant"
    assert [(f.name, str(f.type), f.nullable) for f in footer.schema_arrow] == [
        ("instantTime", "string", True), ("completionTime", "string", True), ("action", "string", True),
        ("metadata", "binary", True), ("plan", "binary", True), ("version", "int32", False)]
    table = footer.read()
    assert table["instantTime"].to_pylist() == ["20260101000000100", "20260101000000200"]  # oldest first
    assert table["version"].to_pylist() == [1, 1]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(batches=st.lists(st.lists(st.integers(0, 10**6), min_size=1, max_size=4, unique=True), min_size=1,
                        max_size=13))
def test_history_round_trips_any_batches(tmp_path_factory, batches):
    storage = open_storage(str(tmp_path_factory.mktemp("h")))
    written = set()
    base = 20260101000000000
    offset = 0
    for batch in batches:  # batches of increasing instants, as archiving appends them
        times = [str(base + offset + n) for n in sorted(batch)]
        offset += 10**6 + 1
        append_history(storage, HISTORY, [_commit_row(ts) for ts in times])
        written.update(times)
    history = ArchivedTimeline.load(storage, 2, HISTORY)
    assert [i.requested_time for i in history.instants] == sorted(written)
    for inst in history.instants:
        assert inst.completion_time == str(int(inst.requested_time) + 5)
        assert history.commit_metadata(inst).write_stats()[0].path == f"p/f1_0-1-0_{inst.requested_time}.parquet"
    if len(batches) >= 10:  # ten level-0 files were compacted into a level-1 file
        assert any(e.name.endswith("_1.parquet") for e in storage.list(HISTORY))


def test_a_half_written_batch_is_ignored_and_rewritten(tmp_path):
    """Killed after the parquet file, before the manifest: readers see the previous snapshot, and archiving the
    batch again (its active instants were not deleted) publishes it."""
    storage = open_storage(str(tmp_path))
    append_history(storage, HISTORY, [_commit_row("20260101000000100")])
    leftover = "20260101000000200_20260101000000300_0.parquet"
    (tmp_path / HISTORY / leftover).write_bytes(b"PAR1 half a file")
    assert [i.requested_time for i in ArchivedTimeline.load(storage, 2, HISTORY).instants] == ["20260101000000100"]
    append_history(storage, HISTORY, [_commit_row("20260101000000200"), _commit_row("20260101000000300")])
    assert [i.requested_time for i in ArchivedTimeline.load(storage, 2, HISTORY).instants] == [
        "20260101000000100", "20260101000000200", "20260101000000300"]
    # killed after the manifest, before _version_: the highest manifest counts when _version_ is gone
    (tmp_path / HISTORY / "_version_").unlink()
    assert len(ArchivedTimeline.load(storage, 2, HISTORY).instants) == 3


def test_malformed_history_names_the_file(tmp_path):
    storage = open_storage(str(tmp_path))
    name = append_history(storage, HISTORY, [_commit_row("20260101000000100")])
    assert name is not None
    (tmp_path / HISTORY / name).write_bytes(b"not parquet at all")
    with pytest.raises(CorruptTableError, match=name):
        ArchivedTimeline.load(storage, 2, HISTORY)
    (tmp_path / HISTORY / name).unlink()
    with pytest.raises(CorruptTableError, match=f"{name}, which is missing"):
        ArchivedTimeline.load(storage, 2, HISTORY)
    (tmp_path / HISTORY / "manifest_1").write_text("{ not json")
    with pytest.raises(CorruptTableError, match="manifest_1"):
        ArchivedTimeline.load(storage, 2, HISTORY)


def test_archived_paths_outside_the_table_are_refused(tmp_path):
    storage = open_storage(str(tmp_path))
    append_history(storage, HISTORY, [_commit_row("20260101000000100", path="../../etc/{ts}.parquet")])
    history = ArchivedTimeline.load(storage, 2, HISTORY)
    with pytest.raises(CorruptTableError, match="refusing path"):
        history.commit_metadata(history.instants[0])


def test_a_garbled_v6_archive_file_fails_the_query_naming_it(tmp_path):
    t, metadata = _archived_v6_table(tmp_path / "t")
    archive = sorted((tmp_path / "t" / ".hoodie" / "archived").glob(".commits_.archive.*"))[0]
    data = bytearray(archive.read_bytes())
    data[40:60] = b"\xff" * 20
    archive.write_bytes(bytes(data))
    with pytest.raises(CorruptTableError, match=archive.name):
        HudiTable(str(tmp_path / "t")).incremental("0")
    latest = HudiTable(str(tmp_path / "t"))  # reads of the active timeline never open the archive
    assert latest.to_arrow().num_rows == len(metadata)
    assert latest.incremental(latest.timeline()[-1].requested_time).num_rows == 0


# --- layout 2 end to end on tables Apache Hudi wrote -------------------------------------------------------

def _archive_like_hudi_1x(path, count: int) -> list[str]:
    """Move the oldest `count` completed commit-like actions (and their pending files) of a v8/v9 table into its
    LSM history, as Hudi 1.x archiving does (which keeps a replacecommit active while the file groups it replaced
    have files: pick `count` below the first one); returns their instant times."""
    storage = open_storage(str(path))
    folder = ".hoodie/timeline"
    timeline = Timeline.load(storage, 2)
    moved = [i for i in timeline.commits()][:count]
    batch = []
    for inst in moved:
        done = storage.read_bytes(timeline.file_path(inst))
        plan = None
        for name in (f"{inst.requested_time}.{a}.requested" for a in ("clustering", "replacecommit", "compaction")):
            if storage.exists(posixpath.join(folder, name)):
                plan = storage.read_bytes(posixpath.join(folder, name)) or None
        batch.append(history_row(inst.requested_time, str(inst.completion_time), inst.action, done, plan))
    append_history(storage, HISTORY, batch)
    times = {i.requested_time for i in moved}
    for entry in storage.list(folder):
        parsed = None if entry.is_dir else parse_instant_file_name(entry.name, 2)
        if parsed is not None and parsed.requested_time in times:
            storage.delete(entry.path)
    return sorted(times)


@pytest.mark.parametrize("name, count", [("cow_v9_txns_simple_meta", 7), ("quickstart_mor_avro_v8_trips_8i3u1d", 3)])
def test_lsm_history_of_hudi_tables_answers_as_the_active_timeline_did(tmp_path, reference_dir, name, count):
    path = tmp_path / name
    shutil.copytree(reference_dir / name, path)
    before = HudiTable(str(path))
    commits = [i.requested_time for i in before.load_timeline().commits()]
    keys = [c for c in before.schema.names][:4]
    as_of = {c: rows(before.to_arrow(as_of=c), keys) for c in commits}
    incremental = {c: rows(before.incremental(c), keys) for c in ["0", *commits[:count]]}
    changes = rows(before.changes("0"), keys + ["_change_type", "_commit_time"])
    archived = _archive_like_hudi_1x(path, count)
    assert len(archived) == count
    after = HudiTable(str(path))
    assert after.load_timeline().find(archived[0]) is None
    for c in commits:
        got = after.to_arrow(as_of=c)
        assert rows(got, keys) == as_of[c], c
        if c in archived:  # hudi-rs, on the untouched table, agrees where its reads reach
            assert rows(got, keys) == rows(hudi_rs(str(reference_dir / name), as_of=c), keys), c
    for c, want in incremental.items():
        assert rows(after.incremental(c), keys) == want, c
    assert rows(after.changes("0"), keys + ["_change_type", "_commit_time"]) == changes
