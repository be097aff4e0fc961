"""Writes that fail half way leave no visible rows, and rollback leaves no file of the failed instant."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable, faults
from hudi_ds.recovery.rollback import rollback_failed_writes
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.task import TaskWriter


def data(ids, ts):
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 4}" for i in ids],
                     "v": [float(i) for i in ids]})


def files_of(path: str, instant: str) -> list[str]:
    out = []
    for p in Path(path).rglob("*"):
        if p.is_file() and instant in p.name:
            out.append(str(p.relative_to(path)))
        elif p.is_file() and ".hoodie" not in p.parts and p.name.startswith(".") and p.suffix != "":
            pass
    return out


def data_files(path: str) -> set[str]:
    return {str(p.relative_to(path)) for p in Path(path).rglob("*")
            if p.is_file() and ".hoodie" not in p.parts and not p.name.startswith(".hoodie_partition")}


@pytest.fixture(params=["MERGE_ON_READ", "COPY_ON_WRITE"])
def table(tmp_path, request):
    t = HudiTable.create(str(tmp_path / "t"), table_name="f", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type=request.param, buckets=2)
    t.write(data(range(20), 1))
    return t


def test_injected_failure_leaves_table_unchanged(table):
    before = rows(table.to_arrow(), ["id", "ts"])
    files_before = data_files(table.path)
    faults.fail_after(2)
    try:
        with pytest.raises(faults.InjectedFault):
            table.write(data(range(10, 40), 2))
    finally:
        faults.fail_after(None)
    assert rows(table.to_arrow(), ["id", "ts"]) == before
    assert rows(hudi_rs(table.path), ["id", "ts"]) == before
    assert data_files(table.path) == files_before
    pending = [i for i in table.timeline() if not i.is_completed]
    assert pending == []
    assert [i.action for i in table.timeline()][-1] == "rollback"


def test_crashed_writer_is_invisible_and_rolled_back(table):
    before = rows(table.to_arrow(), ["id", "ts"])
    files_before = data_files(table.path)
    coordinator = Coordinator(table.storage, table.config)
    plan = coordinator.begin("upsert", table.schema)
    task = TaskWriter(plan)
    task.write(data(range(10, 40), 2))
    task.finish()  # files written, never committed: the process "crashed" here
    assert data_files(table.path) != files_before
    assert rows(table.to_arrow(), ["id", "ts"]) == before
    # the crashed instant is rolled back before the next commit, so hudi-rs never sees its files
    assert rollback_failed_writes(table.storage, table.config, timeout_s=0) == [plan.instant]
    assert data_files(table.path) == files_before
    assert not files_of(table.path, plan.instant) or all(".hoodie" in f for f in files_of(table.path, plan.instant))
    table.write(data(range(0, 5), 3))
    assert rows(hudi_rs(table.path), ["id", "ts"]) == rows(table.to_arrow(), ["id", "ts"])


class _Killed(BaseException):
    """The writer process dying: no cleanup runs."""


def _die_while_writing(monkeypatch, linked: bool) -> None:
    """Local writes stage a hidden copy and link it into place, then remove the copy: the writer dies after
    staging a data file (`linked`: after linking it too), as a SIGKILL leaves it."""
    import os

    from hudi_ds.storage.local import LocalStorage

    def stage_then_die(original):
        def write(self, rel, data):
            if rel.startswith(".hoodie"):
                return original(self, rel, data)
            full = self._target(rel)
            staged = self._staged(full, data)
            if linked:
                os.link(staged, full)
            raise _Killed
        return write

    for name in ("put_if_absent", "write_bytes"):
        monkeypatch.setattr(LocalStorage, name, stage_then_die(getattr(LocalStorage, name)))


def _staged_copies(path: str) -> list[Path]:
    return [p for p in Path(path).rglob("*.tmp") if ".hoodie" not in p.parts]


@pytest.mark.parametrize("linked", [True, False])
def test_a_writer_killed_while_writing_a_file_leaves_nothing_any_reader_sees(table, monkeypatch, linked):
    """A staged copy left by a killed writer holds a whole data file. Hudi's readers take a hidden name holding
    ".log." for a log file (hudi-rs read such a copy as a file group of its own, rows the table had deleted
    coming back), so the copy's name must not look like one; and the rollback removes copies a minute old."""
    import os
    import time

    before = rows(table.to_arrow(), ["id", "ts"])
    plan = Coordinator(table.storage, table.config).begin("upsert", table.schema)
    task = TaskWriter(plan)
    task.write(data(range(10, 40), 2))
    _die_while_writing(monkeypatch, linked)
    with pytest.raises(_Killed):
        task.finish()
    monkeypatch.undo()
    staged = _staged_copies(table.path)
    assert staged, "the kill left no staged copy: the test does not test anything"
    long_ago = time.time() - 120
    if not linked:
        for p in staged:
            os.utime(p, (long_ago, long_ago))
    assert rollback_failed_writes(table.storage, table.config, timeout_s=0) == [plan.instant]
    # a fresh copy may be a live writer's (this one is not, but the rollback cannot know): it stays
    assert bool(_staged_copies(table.path)) == linked
    # hudi-rs takes a log block of an instant older than the active timeline for committed: archive the
    # killed instant and its rollback, and delete rows the copy still holds
    for ts in range(3, 9):
        table.write(data(range(10 + ts, 40, 2), ts), operation="delete" if ts % 2 else "upsert")
    table.archive(min_commits=2, max_commits=3)
    assert all(i.requested_time > plan.instant for i in table.timeline())
    assert rows(hudi_rs(table.path), ["id", "ts"]) == rows(table.to_arrow(), ["id", "ts"]) != before

    # what a rollback left (too young then), and a copy named as before 2026-11-26, go with the next clean
    old_style = staged[0].parent / ".x_1-0-1_20260101000000000.parquet.0123456789abcdef0123456789abcdef.tmp"
    old_style.write_bytes(b"")
    for p in [*_staged_copies(table.path), old_style]:
        os.utime(p, (long_ago, long_ago))
    table.clean(retain_commits=1)
    assert not _staged_copies(table.path)


def test_a_fresh_staged_copy_may_be_a_live_writers_and_stays(tmp_path):
    import os
    import time

    from hudi_ds.storage.local import LocalStorage

    storage = LocalStorage(str(tmp_path))
    fresh = storage._staged(storage.full("p/a.parquet"), b"x")
    old = storage._staged(storage.full("p/a.parquet"), b"y")
    other = storage._staged(storage.full("p/b.parquet"), b"z")
    long_ago = time.time() - 120
    for p in (old, other):
        os.utime(p, (long_ago, long_ago))
    storage.discard_staged(["p/a.parquet"])
    assert [os.path.exists(p) for p in (fresh, old, other)] == [True, False, True]


def test_rollback_of_latest_completed_commit(table):
    before = rows(table.to_arrow(), ["id", "ts"])
    files_before = data_files(table.path)
    instant = table.write(data(range(10, 30), 5))
    assert rows(table.to_arrow(), ["id", "ts"]) != before
    table.rollback(instant)
    assert rows(table.to_arrow(), ["id", "ts"]) == before
    assert rows(hudi_rs(table.path), ["id", "ts"]) == before
    assert data_files(table.path) == files_before


def test_retried_task_takes_over_its_claim(table):
    """A task attempt that claimed a new bucket and then failed: the retry (same partition id, next attempt)
    owns the claim, so the bucket gets its base file from the retry, other tasks' rows join it, and the failed
    attempt's file is not committed."""
    from hudi_ds.cli.validate import validate

    before = {(r["id"], r["dt"]): r["ts"] for r in table.to_arrow().to_pylist()}
    fresh = pa.table({"id": [f"n{i}" for i in range(8)], "ts": [2] * 8, "dt": ["new"] * 8,
                      "v": [float(i) for i in range(8)]})
    coordinator = Coordinator(table.storage, table.config)
    plan = coordinator.begin("upsert", table.schema)
    faults.fail_after(0)  # attempt 0 of task 1 claims the new bucket(s), writes one file, dies
    try:
        first = TaskWriter(plan, task_id=1, attempt=0)
        first.write(fresh.slice(0, 4))
        with pytest.raises(faults.InjectedFault):
            first.finish()
    finally:
        faults.fail_after(None)
    other = TaskWriter(plan, task_id=0)
    other.write(pa.concat_tables([fresh.slice(4), data(range(5), 2)]))  # the same new buckets, and old ones
    results = [other.finish()]
    retry = TaskWriter(plan, task_id=1, attempt=1)
    retry.write(fresh.slice(0, 4))
    results.append(retry.finish())
    coordinator.commit(plan, results)

    want = {**before, **{(f"k{i}", f"d{i % 4}"): 2 for i in range(5)}, **{(f"n{i}", "new"): 2 for i in range(8)}}
    got = table.to_arrow()
    assert {(r["id"], r["dt"]): r["ts"] for r in got.to_pylist()} == want
    assert rows(hudi_rs(table.path), ["id", "dt", "ts"]) == rows(got, ["id", "dt", "ts"])
    assert validate(table.path)["ok"]
    names = [p.name for p in (Path(table.path) / "new").iterdir() if not p.name.startswith(".hoodie")]
    groups = {n.lstrip(".").split("_")[0] for n in names}
    with_base = {n.split("_")[0] for n in names if n.endswith(".parquet")}
    assert groups == with_base and len(groups) == 2  # no log-only file slice
    assert not [n for n in names if "_1-0-0" in n]  # nothing of the failed attempt


def test_the_clean_after_a_commit_sweeps_staged_copies_while_a_rollback_is_on_the_timeline(tmp_path):
    """The clean after each commit walks the table for killed writers' copies only while the active timeline
    records a rollback (killed writes are rolled back); an explicit clean always does."""
    import os
    import time

    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=1, options={"clean.retain_commits": 1})

    def write(ts):
        return t.write(pa.table({"id": [1, 2], "ts": [ts, ts], "dt": ["a", "a"]}))

    write(1)
    long_ago = time.time() - 120

    def aged_copy(n: int) -> Path:
        copy = t.storage._staged(t.storage.full(f"a/x{n}_1-0-1_20260101000000000.parquet"), b"x")
        os.utime(copy, (long_ago, long_ago))
        return Path(copy)

    first = aged_copy(1)
    write(2)
    write(3)
    assert first.exists()  # no rollback on the timeline: the commits' cleans did not walk the table
    t.rollback(write(4))
    second = aged_copy(2)
    write(5)
    assert not first.exists() and not second.exists()
    third = aged_copy(3)
    t.clean(retain_commits=1)
    assert not third.exists()
