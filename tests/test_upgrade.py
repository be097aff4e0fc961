"""Upgrades (6 -> 8 -> 9) and downgrades (9 -> 8 -> 6) of tables hudi_ds wrote, through HudiTable, the CLI and the
write option: the table reads the same before and after (our reader and hudi-rs; snapshot, time travel,
incremental and change feed to the instants before the change), new writes land at the new version, the files are
shaped as Apache Hudi's, a SIGKILL at any moment leaves a table that reads the same and a rerun finishes the job,
and what cannot be converted is refused with nothing written."""

from __future__ import annotations

import json
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import fastavro
import pyarrow as pa
import pytest
from hypothesis import given
from hypothesis import strategies as st
from tables import REFERENCE_DIR, hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli import main
from hudi_ds.cli.validate import validate
from hudi_ds.config.properties import loads
from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import (
    CommitConflictError,
    ConfigError,
    CorruptTableError,
    InstantStateError,
    UnsupportedTableError,
)
from hudi_ds.keys.keygen import key_generator_class
from hudi_ds.timeline.archived import with_history
from hudi_ds.upgrade_properties import downgraded_properties, upgraded_properties

COLS = ["id", "ts", "name", "dt"]
REF = {8: REFERENCE_DIR / "quickstart_mor_avro_v8_trips_8i3u1d", 9: REFERENCE_DIR / "mor_avro_v9_txns_simple_meta"}
# keys a reference table carries for its own features (metadata table, indexes, schema, columns)
OWN_FEATURES = re.compile(r"hoodie\.table\.(metadata|index|create\.schema|partition\.fields|recordkey|name|checksum|"
                          r"initial\.version|ordering\.fields|precombine\.field)|hoodie\.datasource|"
                          r"hoodie\.keygen")
LAYOUT2_NAME = re.compile(r"(\d{17})(?:_(\d{17}))?\.([a-z]+)(?:\.(requested|inflight))?")
KILL_POINTS = ["compaction_file_written", "version_prepared", "version_file_written", "version_files_written",
               "version_history_written", "version_backup_written", "version_switched", "version_old_file_deleted"]


def batch(i: int, keys: range | None = None) -> pa.Table:
    keys = keys if keys is not None else range(i * 2, i * 2 + 6)
    return pa.table({"id": [f"k{k}" for k in keys], "ts": [i] * len(keys), "name": [f"n{i}-{k}" for k in keys],
                     "dt": [("a", "b", "c")[k % 3] for k in keys]})


def build(path: Path | str, *, table_type: str = "MERGE_ON_READ", version: int = 6, cdc: bool = False,
          archive: bool = False, pending_compaction: bool = False,
          storage_options: dict[str, str] | None = None) -> HudiTable:
    """A table hudi_ds wrote: upserts, a delete, compactions and cleans (merge-on-read), archived instants if
    asked, and a compaction still pending with a delta commit written into its new slices."""
    opts = {"hoodie.write.table.version": str(version), "hoodie.table.cdc.enabled": str(cdc).lower(),
            "compaction.delta_commits": "3", "clean.retain_commits": "4"}
    opts.update({"hoodie.keep.min.commits": "5", "hoodie.keep.max.commits": "6"} if archive  # more than cleaning keeps
                else {"hoodie.archive.automatic": "false"})
    t = HudiTable.create(str(path), table_name="trips", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, buckets=2, options=opts, storage_options=storage_options)
    for i in range(6):
        t.write(batch(i))
        if i == 3:
            t.write(batch(i, range(1, 4)).select(["id", "dt"]), operation="delete")
    if pending_compaction:
        assert t.schedule_compaction() is not None
        later = HudiTable(str(path), options={**opts, "compaction.schedule.enabled": "false"},
                          storage_options=storage_options)
        later.write(batch(7, range(0, 3)))
    return HudiTable(str(path), storage_options=storage_options)


def commit_times(t: HudiTable) -> list[str]:
    """Requested times of the commits that wrote records (compactions left out), archived ones included."""
    timeline = with_history(t.load_timeline())
    return [i.requested_time for i in timeline.commits() if not timeline.commit_metadata(i).compacted]


def completions(t: HudiTable) -> dict[str, str]:
    return {i.requested_time: i.completion_time or i.requested_time
            for i in with_history(t.load_timeline()).commits()}


def attempt(read: Any) -> Any:
    """Rows of a read, or the error it raises (a range into cleaned commits fails the same before and after)."""
    try:
        return rows(read(), COLS)
    except Exception as exc:  # noqa: BLE001 - the error class is the result compared
        return type(exc).__name__


def change_rows(t: HudiTable, start: str, end: str) -> Any:
    try:
        return rows(t.changes(start, end), [*COLS, "_change_type"])
    except Exception as exc:  # noqa: BLE001
        return type(exc).__name__


def state(t: HudiTable, times: list[str], key: dict[str, str] | None = None) -> dict[str, Any]:
    """Everything our reader sees of the commits in `times`: snapshot, time travel to each, incremental and change
    feed between consecutive ones. `key` maps a requested time to the bound the table's version takes (its
    completion time on 8/9)."""
    key = key or {ts: ts for ts in times}
    out: dict[str, Any] = {"snapshot": rows(t.to_arrow(), COLS)}
    for ts in times:
        out[f"as_of {ts}"] = attempt(lambda ts=ts: t.to_arrow(as_of=ts))
    for start, end in zip(times, times[1:], strict=False):
        out[f"incremental {start}"] = attempt(lambda s=start, e=end: t.incremental(key[s], key[e]))
        out[f"changes {start}"] = change_rows(t, key[start], key[end])
    return out


def timeline_files(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie" / "timeline").iterdir() if p.is_file())


def v6_instant_files(path: Path) -> list[str]:
    return sorted(p.name for p in (path / ".hoodie").iterdir() if p.is_file() and re.match(r"\d{17}\.", p.name))


def props(path: Path) -> dict[str, str]:
    return loads((path / ".hoodie" / "hoodie.properties").read_text())


def writer_schema(path: Path) -> dict[str, Any]:
    with open(path, "rb") as f:
        return fastavro.reader(f).writer_schema  # type: ignore[return-value]


def listing(path: Path) -> list[tuple[str, bytes]]:
    """Every file of the table with its content (except the commit lock, which any writer touches)."""
    return sorted((str(p.relative_to(path)), p.read_bytes()) for p in path.rglob("*")
                  if p.is_file() and ".locks" not in p.parts)


# ---- upgrades ---------------------------------------------------------------------------------------------

SCENARIOS = {
    "mor_pending_compaction": {"pending_compaction": True},
    "cow": {"table_type": "COPY_ON_WRITE"},
    "mor_archived": {"archive": True},
    "mor_cdc": {"cdc": True},
    "cow_archived_cdc": {"table_type": "COPY_ON_WRITE", "archive": True, "cdc": True},
}


@pytest.mark.parametrize("scenario", sorted(SCENARIOS))
def test_an_upgraded_table_reads_the_same_and_writes_version_9(tmp_path, scenario):
    t = build(tmp_path / "t", **SCENARIOS[scenario])
    times = commit_times(t)
    before = state(t, times)
    hudi_rs_before = rows(hudi_rs(t.path), COLS)
    archived = (tmp_path / "t" / ".hoodie" / "archived").is_dir() and any(
        (tmp_path / "t" / ".hoodie" / "archived").iterdir())
    assert archived == SCENARIOS[scenario].get("archive", False)

    assert t.upgrade(to=9) == 9
    base = tmp_path / "t"
    assert t.config.version == 9 and HudiTable(str(base)).config.version == 9
    assert not v6_instant_files(base)  # every instant moved into .hoodie/timeline
    assert not (base / ".hoodie" / "hoodie.properties.backup").exists()
    if archived:
        history = base / ".hoodie" / "timeline" / "history"
        assert (history / "_version_").exists() and list(history.glob("*.parquet"))
        assert not list((base / ".hoodie" / "archived").glob(".commits_.archive*"))
    upgraded = HudiTable(str(base))
    assert commit_times(upgraded) == times
    assert state(upgraded, times, completions(upgraded)) == before
    assert rows(hudi_rs(str(base)), COLS) == before["snapshot"]
    if scenario != "mor_pending_compaction":  # hudi-rs misses the logs of a pending compaction's slice on v6
        assert hudi_rs_before == before["snapshot"]
    assert validate(upgraded)["ok"]

    # a new write lands as version 9: completed instant named with its completion time, Avro metadata, and on
    # merge-on-read a log file named after the write itself
    expected = {r[0]: r for r in before["snapshot"]}
    expected.update({r[0]: r for r in rows(batch(9, range(0, 4)), COLS)})
    instant = upgraded.write(batch(9, range(0, 4)))
    done = [n for n in timeline_files(base) if n.startswith(f"{instant}_")]
    assert len(done) == 1 and (base / ".hoodie" / "timeline" / done[0]).read_bytes().startswith(b"Obj\x01")
    if upgraded.config.is_mor:
        assert list(base.rglob(f".*_{instant}.log.1_*"))
    assert rows(upgraded.to_arrow(), COLS) == sorted(expected.values(), key=repr) == rows(hudi_rs(str(base)), COLS)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_upgrade_6_to_8_then_8_to_9(tmp_path, table_type):
    t = build(tmp_path / "t", table_type=table_type)
    times = commit_times(t)
    before = state(t, times)
    assert t.upgrade(to=8) == 8
    assert rows(hudi_rs(t.path), COLS) == before["snapshot"]
    assert state(HudiTable(t.path), times, completions(t)) == before
    p8 = props(Path(t.path))
    assert (p8["hoodie.table.version"], p8["hoodie.timeline.layout.version"], p8["hoodie.table.initial.version"]) == \
        ("8", "2", "6")
    assert p8["hoodie.table.precombine.field"] == "ts" and "hoodie.table.ordering.fields" not in p8
    files = timeline_files(Path(t.path))
    assert t.upgrade(to=9) == 9
    assert timeline_files(Path(t.path)) == files  # same layout: only the properties change
    p9 = props(Path(t.path))
    assert p9["hoodie.table.initial.version"] == "6" and p9["hoodie.table.ordering.fields"] == "ts"
    assert "hoodie.table.precombine.field" not in p9 and "hoodie.record.merge.strategy.id" not in p9
    assert p9["hoodie.legacy.payload.class"] == p8["hoodie.compaction.payload.class"]
    assert "hoodie.compaction.payload.class" not in p9
    assert state(HudiTable(t.path), times, completions(t)) == before


@pytest.mark.parametrize("version", [8, 9])
def test_upgraded_files_are_shaped_as_apache_hudi_writes_them(tmp_path, reference_dir, version):
    t = build(tmp_path / "t")
    t.upgrade(to=version)
    base, ref = Path(t.path), REF[version]
    names = timeline_files(base)
    assert names and all(LAYOUT2_NAME.fullmatch(n) for n in names), names
    for n in names:
        m = LAYOUT2_NAME.fullmatch(n)
        assert m is not None and (m.group(2) or m.group(1)) >= m.group(1)
    # the pending and completed files of every instant, as Hudi keeps them
    completed = [n for n in names if "_" in n]
    assert {n.split("_")[0] for n in completed} == {n.split(".")[0].split("_")[0] for n in names}

    mine, theirs = props(base), props(ref)
    for key, value in theirs.items():
        if not OWN_FEATURES.match(key):
            assert mine.get(key) == value, key
    assert mine["hoodie.table.initial.version"] == "6"  # Hudi keeps the version a table was created at

    delta = next(n for n in completed if n.endswith(".deltacommit"))
    ref_delta = next(p for p in (ref / ".hoodie" / "timeline").iterdir()
                     if p.name.endswith(".deltacommit") and "_" in p.name)
    assert writer_schema(base / ".hoodie" / "timeline" / delta) == writer_schema(ref_delta)
    inflight = next(n for n in names if n.endswith(".deltacommit.inflight"))
    assert writer_schema(base / ".hoodie" / "timeline" / inflight)["name"].endswith("HoodieCommitMetadata")
    compaction = next(n for n in completed if n.endswith(".commit"))
    assert f"{compaction.split('_')[0]}.compaction.requested" in names  # a compaction completes as a commit


def test_completion_times_are_the_modification_times_unless_a_copy_lost_them(tmp_path):
    t = build(tmp_path / "t", table_type="COPY_ON_WRITE")
    stamps = {p.name.split(".")[0]: p.stat().st_mtime for p in Path(t.path, ".hoodie").glob("*.commit")}
    copy = tmp_path / "copy"
    shutil.copytree(t.path, copy)
    now = time.time()
    for n, p in enumerate(sorted(Path(copy, ".hoodie").glob("*.commit"))):  # copied in another order, later
        os.utime(p, (now, now - n))
    before = state(HudiTable(str(copy)), commit_times(t))
    t.upgrade(to=9)
    for name in timeline_files(Path(t.path)):
        if name.endswith(".commit") and "_" in name:
            requested, completion = name.split(".")[0].split("_")
            stamp = time.strftime("%Y%m%d%H%M%S", time.gmtime(stamps[requested]))
            assert completion.startswith(stamp) and completion >= requested
    copied = HudiTable(str(copy))
    copied.upgrade(to=9)
    # the copy's modification times would order its commits wrongly: its requested times are taken instead
    assert all(n.split(".")[0].split("_")[0] == n.split(".")[0].split("_")[1]
               for n in timeline_files(copy) if "_" in n)
    assert state(HudiTable(str(copy)), commit_times(t), completions(HudiTable(str(copy)))) == before


def test_upgrade_on_an_object_store(s3_table):
    uri, opts = s3_table
    t = build(uri, archive=True, pending_compaction=True, storage_options=opts)
    times = commit_times(t)
    before = state(t, times)
    assert t.upgrade(to=9) == 9
    upgraded = HudiTable(uri, storage_options=opts)
    assert state(upgraded, times, completions(upgraded)) == before
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == before["snapshot"]
    upgraded.write(batch(9, range(0, 2)))
    assert rows(upgraded.to_arrow(), COLS) == rows(hudi_rs(uri, storage_options=opts), COLS)


# ---- crashes ----------------------------------------------------------------------------------------------


def _kill_at(path: Path, point: str | None, delay: float, pause_dir: Path, command: str = "upgrade",
             to: int = 9) -> bool:
    """Run `hudi-py upgrade|downgrade` and SIGKILL it where it pauses at `point` (or after `delay` seconds); False
    when it finished first."""
    pause_dir.mkdir()
    env = dict(os.environ)
    if point is not None:
        env.update(HUDI_DS_TEST_PAUSE_AT=point, HUDI_DS_TEST_PAUSE_DIR=str(pause_dir))
    proc = subprocess.Popen([sys.executable, "-m", "hudi_ds.cli", command, str(path), "--to", str(to)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + (30 if point else delay)
    while time.monotonic() < deadline and proc.poll() is None:
        if point and (pause_dir / point).exists():
            break
        time.sleep(0.01)
    if proc.poll() is not None:
        assert proc.returncode == 0, proc.stderr.read().decode() if proc.stderr else proc.returncode
        return False
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    return True


@pytest.mark.slow
def test_an_upgrade_killed_at_any_moment_reads_the_same_and_a_rerun_finishes(tmp_path):
    """Each step of the upgrade killed once (a pause point, then SIGKILL), plus kills at random times; some reruns
    are killed again at a random step before one runs to the end."""
    rng = random.Random(7)
    original = build(tmp_path / "original", archive=True, pending_compaction=True)
    times = commit_times(original)
    before = state(original, times)
    hudi_rs_before = rows(hudi_rs(original.path), COLS)
    kills: list[tuple[str | None, float]] = [(p, 0.0) for p in KILL_POINTS] + [(None, rng.uniform(1.0, 3.0))
                                                                                for _ in range(2)]
    for n, first in enumerate(kills):
        path = tmp_path / f"round{n}"
        shutil.copytree(original.path, path)
        again = [(rng.choice(KILL_POINTS), 0.0)] if rng.random() < 0.3 else []
        for k, (point, delay) in enumerate([first, *again]):
            if not _kill_at(path, point, delay, tmp_path / f"pause{n}-{k}"):
                break
            now = HudiTable(str(path))
            assert now.config.version in (6, 9)
            assert rows(now.to_arrow(), COLS) == before["snapshot"], (point, now.config.version)
            # hudi-rs reads a version 6 table's pending compaction without the logs of its new slices (as it did
            # before the upgrade started), and the table right once the compaction completed
            assert rows(hudi_rs(str(path)), COLS) in (hudi_rs_before, before["snapshot"]), point
        done = HudiTable(str(path))
        assert done.upgrade(to=9) == 9
        assert not v6_instant_files(path) and not (path / ".hoodie" / "hoodie.properties.backup").exists()
        assert state(done, times, completions(done)) == before, first
        assert rows(hudi_rs(str(path)), COLS) == before["snapshot"]
        assert validate(done)["ok"]


@pytest.mark.slow
def test_a_downgrade_killed_at_any_moment_reads_the_same_and_a_rerun_finishes(tmp_path):
    rng = random.Random(11)
    original = build(tmp_path / "original", archive=True)
    times = commit_times(original)
    before = state(original, times)
    original.upgrade(to=9)
    points = [p for p in KILL_POINTS if p not in ("compaction_file_written", "version_history_written")]
    for n, point in enumerate(rng.sample(points, 4)):
        path = tmp_path / f"round{n}"
        shutil.copytree(original.path, path)
        assert _kill_at(path, point, 0.0, tmp_path / f"pause{n}", "downgrade", 6), point
        now = HudiTable(str(path))
        assert now.config.version in (6, 9)
        assert rows(now.to_arrow(), COLS) == before["snapshot"] == rows(hudi_rs(str(path)), COLS), point
        assert now.downgrade(to=6) == 6
        assert not (path / ".hoodie" / "timeline").exists()
        assert state(HudiTable(str(path)), times) == before, point


# ---- downgrades -------------------------------------------------------------------------------------------


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_downgrade_9_to_6_round_trip(tmp_path, table_type):
    t = build(tmp_path / "t", table_type=table_type)
    original = props(Path(t.path))
    times = commit_times(t)
    before = state(t, times)
    t.upgrade(to=9)
    t.write(batch(8, range(0, 2)))  # a version 9 write: its log file is named after it
    after_write = state(t, commit_times(t), completions(t))
    assert t.downgrade(to=6) == 6
    base = Path(t.path)
    assert not (base / ".hoodie" / "timeline").exists() and v6_instant_files(base)
    down = HudiTable(str(base))
    assert state(down, commit_times(down)) == after_write
    assert {k: v for k, v in props(base).items()} == original
    assert all(v == before[k] for k, v in state(down, times).items() if k.startswith("as_of"))
    assert validate(down)["ok"]
    assert rows(hudi_rs(str(base)), COLS) == after_write["snapshot"]
    down.write(batch(10, range(0, 2)))  # written as version 6 again
    assert any(n.endswith(".deltacommit") or n.endswith(".commit") for n in v6_instant_files(base))
    assert rows(down.to_arrow(), COLS) == rows(hudi_rs(str(base)), COLS)


def test_a_version_9_table_downgrades_to_8_and_6(tmp_path, reference_dir):
    t = build(tmp_path / "t", version=9)
    times = commit_times(t)
    before = state(t, times, completions(t))
    assert t.downgrade(to=8) == 8
    mine = props(Path(t.path))
    for key, value in props(REF[8]).items():
        if not OWN_FEATURES.match(key):
            assert mine.get(key) == value, key
    assert state(HudiTable(t.path), times, completions(t)) == before
    assert t.downgrade(to=6) == 6
    six = props(Path(t.path))
    assert (six["hoodie.table.version"], six["hoodie.timeline.layout.version"]) == ("6", "1")
    assert not {"hoodie.table.initial.version", "hoodie.record.merge.mode", "hoodie.timeline.path"} & set(six)
    assert six["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen.SimpleKeyGenerator"
    down = HudiTable(t.path)
    assert state(down, times)["snapshot"] == before["snapshot"] == rows(hudi_rs(t.path), COLS)


def test_a_downgrade_returns_archived_instants_to_the_active_timeline(tmp_path):
    t = build(tmp_path / "t", archive=True, cdc=True)
    times = commit_times(t)
    before = state(t, times)
    t.upgrade(to=9)
    assert list(Path(t.path, ".hoodie", "timeline", "history").glob("*.parquet"))
    assert t.downgrade(to=6) == 6
    base = Path(t.path)
    assert not (base / ".hoodie" / "timeline").exists()
    assert not list((base / ".hoodie" / "archived").glob(".commits_.archive*"))
    down = HudiTable(str(base))
    assert [i.requested_time for i in down.load_timeline().commits() if i.requested_time in times] == times
    assert state(down, times) == before
    assert rows(hudi_rs(str(base)), COLS) == before["snapshot"]
    assert validate(down)["ok"]
    assert down.archive(min_commits=2, max_commits=3)  # the version 6 archive takes them again
    assert list((base / ".hoodie" / "archived").glob(".commits_.archive*"))
    assert state(HudiTable(str(base)), times) == before


def test_downgrades_of_what_only_the_newer_version_holds_are_refused(tmp_path):
    partial = build(tmp_path / "partial", version=9, table_type="COPY_ON_WRITE")
    text = (Path(partial.path) / ".hoodie" / "hoodie.properties").read_text()
    (Path(partial.path) / ".hoodie" / "hoodie.properties").write_text(
        text + "hoodie.table.partial.update.mode=IGNORE_DEFAULTS\n")
    files = listing(Path(partial.path))
    with pytest.raises(UnsupportedTableError, match="partial updates"):
        HudiTable(partial.path).downgrade(to=8)
    assert listing(Path(partial.path)) == files
    with pytest.raises(ConfigError, match="hudi-py upgrade"):
        build(tmp_path / "six", table_type="COPY_ON_WRITE").downgrade(to=8)


# ---- hoodie.properties across versions --------------------------------------------------------------------

V6_PROPERTIES = st.builds(
    lambda table_type, ordering, partitions, keys, cdc: TableConfig(
        name="trips", table_type=table_type, version=6, layout_version=1, record_key_fields=keys,
        ordering_field=ordering if keys else None, partition_fields=partitions,
        key_generator=key_generator_class(keys, partitions), num_buckets=2, index_type="BUCKET", timezone="UTC",
        database="default", cdc_enabled=cdc).to_properties(),
    st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), st.sampled_from([None, "ts"]),
    st.sampled_from([[], ["dt"], ["dt", "flag"]]), st.sampled_from([[], ["id"], ["id", "num"]]), st.booleans())


@given(V6_PROPERTIES)
def test_properties_of_a_version_6_table_survive_every_upgrade_and_downgrade(v6):
    v8, v9 = upgraded_properties(v6, 8), upgraded_properties(v6, 9)
    assert upgraded_properties(v8, 9) == v9  # one step or two, the same table
    assert downgraded_properties(v9, 8) == v8
    assert downgraded_properties(v9, 6) == downgraded_properties(v8, 6) == v6
    for props, version in ((v8, 8), (v9, 9)):
        config = TableConfig.from_properties(props)  # what a reader of the new version takes from it
        assert (config.version, config.format.layout, config.timeline_path) == (version, 2, "timeline")
        assert props["hoodie.table.initial.version"] == "6"
        assert config.ordering_field == TableConfig.from_properties(v6).ordering_field
        assert config.key_generator == v6["hoodie.table.keygenerator.class"]


@pytest.mark.parametrize("name,kind", [
    ("SimpleKeyGenerator", "SIMPLE"), ("SimpleAvroKeyGenerator", "SIMPLE_AVRO"),
    ("NonpartitionedAvroKeyGenerator", "NON_PARTITION_AVRO"), ("ComplexAvroKeyGenerator", "COMPLEX_AVRO"),
    ("TimestampBasedAvroKeyGenerator", "TIMESTAMP_AVRO"), ("CustomAvroKeyGenerator", "CUSTOM_AVRO")])
def test_the_key_generator_type_recorded_is_the_one_hudi_names(name, kind):
    """KeyGeneratorType.fromClassName: an Avro class (Flink's tables have them) keeps its _AVRO type, which a reader
    maps back to that class; downgraded, the class comes back."""
    v6 = TableConfig(name="t", version=6, layout_version=1, record_key_fields=["id"], partition_fields=["dt"],
                     key_generator=f"org.apache.hudi.keygen.{name}").to_properties()
    v9 = upgraded_properties(v6, 9)
    assert v9["hoodie.table.keygenerator.type"] == kind
    assert downgraded_properties(v9, 6)["hoodie.table.keygenerator.class"] == f"org.apache.hudi.keygen.{name}"
    created = TableConfig(name="t", version=9, layout_version=2, record_key_fields=["id"], partition_fields=["dt"],
                          key_generator=f"org.apache.hudi.keygen.{name}").to_properties()
    assert created["hoodie.table.keygenerator.type"] == kind
    stripped = {k: v for k, v in v9.items() if k != "hoodie.table.keygenerator.class"}
    assert downgraded_properties(stripped, 6)["hoodie.table.keygenerator.class"] == f"org.apache.hudi.keygen.{name}"


# ---- refusals ---------------------------------------------------------------------------------------------


def test_what_cannot_be_upgraded_is_refused_with_nothing_written(tmp_path):
    live = build(tmp_path / "live")
    client = live.write_client()
    plan = client.begin(client.prepare(None, batch(1).schema))  # a write in progress, heartbeat fresh
    files = listing(Path(live.path))
    with pytest.raises(InstantStateError, match=plan.instant):
        live.upgrade(to=9)
    assert listing(Path(live.path)) == files
    client.abort(plan)

    with_mdt = build(tmp_path / "mdt", table_type="COPY_ON_WRITE")
    (Path(with_mdt.path) / ".hoodie" / "metadata").mkdir()
    files = listing(Path(with_mdt.path))
    with pytest.raises(UnsupportedTableError, match="metadata table"):
        with_mdt.upgrade(to=9)
    assert listing(Path(with_mdt.path)) == files

    payload = build(tmp_path / "payload", table_type="COPY_ON_WRITE")
    props_file = Path(payload.path) / ".hoodie" / "hoodie.properties"
    props_file.write_text(props_file.read_text().replace("DefaultHoodieRecordPayload", "PartialUpdateAvroPayload"))
    files = listing(Path(payload.path))
    with pytest.raises(UnsupportedTableError, match="PartialUpdateAvroPayload"):
        HudiTable(payload.path).upgrade(to=9)
    assert listing(Path(payload.path)) == files

    corrupt = build(tmp_path / "corrupt")  # merge-on-read: nothing compacted either
    damaged = sorted(Path(corrupt.path, ".hoodie").glob("*.deltacommit"))[-1]
    damaged.write_bytes(b"{not json")
    files = listing(Path(corrupt.path))
    with pytest.raises(CorruptTableError, match=damaged.name):
        corrupt.upgrade(to=9)
    assert listing(Path(corrupt.path)) == files

    with pytest.raises(ConfigError, match="hudi-py downgrade"):
        build(tmp_path / "nine", version=9, table_type="COPY_ON_WRITE").upgrade(to=8)


# ---- the write option -------------------------------------------------------------------------------------


def test_a_write_asking_for_a_higher_version_upgrades_the_table_when_auto_upgrade_is_on(tmp_path):
    t = build(tmp_path / "t")
    expected = {r[0]: r for r in rows(t.to_arrow(), COLS)}
    expected.update({r[0]: r for r in rows(batch(9, range(0, 2)), COLS)})

    kept = HudiTable(t.path, options={"hoodie.write.table.version": "9", "hoodie.write.auto.upgrade": "false"})
    kept.write(batch(9, range(0, 1)))
    assert HudiTable(t.path).config.version == 6 and not (Path(t.path) / ".hoodie" / "timeline").exists()

    HudiTable(t.path, options={"hoodie.write.table.version": "9"}).write(batch(9, range(0, 2)))
    upgraded = HudiTable(t.path)
    assert upgraded.config.version == 9
    assert upgraded.config.metadata_partitions == ["files"]  # hoodie.metadata.enable defaults to true on 8/9
    assert upgraded.snapshot().listed_files is not None and validate(upgraded)["ok"]
    assert rows(upgraded.to_arrow(), COLS) == sorted(expected.values(), key=repr) == rows(hudi_rs(t.path), COLS)
    with pytest.raises(ConfigError, match="hudi-py downgrade"):
        HudiTable(t.path, options={"hoodie.write.table.version": "6"}).write(batch(10))


def test_a_writer_that_opened_the_table_before_its_upgrade_cannot_commit_into_it(tmp_path):
    t = build(tmp_path / "t")
    stale = HudiTable(t.path)  # holds the version 6 properties
    before = rows(t.to_arrow(), COLS)
    HudiTable(t.path).upgrade(to=9)
    data = [name for name, _ in listing(Path(t.path)) if not name.startswith(".hoodie")]
    with pytest.raises(CommitConflictError, match="version 6 to 9"):
        stale.write(batch(9))
    assert [name for name, _ in listing(Path(t.path)) if not name.startswith(".hoodie")] == data  # rolled back
    fresh = HudiTable(t.path)
    assert rows(fresh.to_arrow(), COLS) == before == rows(hudi_rs(t.path), COLS)
    fresh.write(batch(9))  # opened again, the write goes through
    assert rows(fresh.to_arrow(), COLS) == rows(hudi_rs(t.path), COLS)


# ---- the metadata table -----------------------------------------------------------------------------------


def mdt_version(path: Path) -> str | None:
    """The metadata table's own version, None when the table has none in use."""
    if "files" not in props(path).get("hoodie.table.metadata.partitions", ""):
        assert not (path / ".hoodie" / "metadata").exists()
        return None
    return props(path / ".hoodie" / "metadata")["hoodie.table.version"]


def test_a_metadata_table_follows_every_version_change(tmp_path, capsys):
    """Downgrades to 8 rebuild it at 8, to 6 drop it (hudi_ds writes no version 6 metadata table; readers list
    files); an upgrade of a table that had none leaves it to the next write, which builds it; at each step
    validate finds it in step and hudi-rs (listing through it on 8/9) reads what our reader reads."""
    base = tmp_path / "t"
    t = build(base, version=9)
    expected = rows(t.to_arrow(), COLS)

    def check(version: int, mdt: str | None) -> None:
        now = HudiTable(str(base))
        assert now.config.version == version and mdt_version(base) == mdt
        assert rows(now.to_arrow(), COLS) == expected == rows(hudi_rs(str(base)), COLS)
        assert validate(now)["ok"], validate(now)["errors"]

    check(9, "9")
    assert main(["downgrade", str(base), "--to", "8"]) == 0
    check(8, "8")
    assert main(["upgrade", str(base), "--to", "9"]) == 0
    check(9, "9")
    assert main(["downgrade", str(base), "--to", "6"]) == 0
    check(6, None)
    HudiTable(str(base)).write(batch(9, range(0, 2)))  # version 6: no metadata table is made
    expected = rows(HudiTable(str(base)).to_arrow(), COLS)
    check(6, None)
    assert main(["upgrade", str(base), "--to", "8"]) == 0
    check(8, None)  # the upgrade alone makes none, as Hudi's; the next write does
    HudiTable(str(base)).write(batch(10, range(0, 2)))
    expected = rows(HudiTable(str(base)).to_arrow(), COLS)
    check(8, "8")
    capsys.readouterr()


@pytest.mark.parametrize("point", ["version_metadata_dropped", "version_switched"])
def test_a_version_change_killed_around_its_metadata_table_is_finished_by_the_next_write(tmp_path, point):
    """Killed after dropping the metadata table, or after the switch but before the rebuild, a version change
    leaves a table without one that reads the same; the rerun finishes the change and the next write (the
    default) builds the metadata table again."""
    base = tmp_path / "t"
    t = build(base, version=9)
    expected = rows(t.to_arrow(), COLS)
    assert _kill_at(base, point, 0.0, tmp_path / "pause", "downgrade", 8)
    now = HudiTable(str(base))
    assert now.config.version in (8, 9) and mdt_version(base) is None
    assert rows(now.to_arrow(), COLS) == expected == rows(hudi_rs(str(base)), COLS)
    assert now.downgrade(to=8) == 8
    HudiTable(str(base)).write(batch(9, range(0, 2)))
    assert mdt_version(base) == "8"
    after = HudiTable(str(base))
    assert rows(after.to_arrow(), COLS) == rows(hudi_rs(str(base)), COLS) and validate(after)["ok"]


# ---- the CLI ----------------------------------------------------------------------------------------------


def test_cli_upgrade_and_downgrade(tmp_path, capsys):
    t = build(tmp_path / "t", table_type="COPY_ON_WRITE")
    before = rows(t.to_arrow(), COLS)
    assert main(["upgrade", t.path, "--to", "9", "--json"]) == 0
    out = json.loads(capsys.readouterr().out)
    assert out["result"] == {"from": 6, "to": 9} and "upgraded from version 6 to 9" in out["message"]
    assert main(["upgrade", t.path, "--to", "9"]) == 0
    assert "version 9 already" in capsys.readouterr().out
    assert main(["downgrade", t.path, "--to", "6", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["result"] == {"from": 9, "to": 6}
    assert rows(HudiTable(t.path).to_arrow(), COLS) == before
    assert main(["downgrade", t.path, "--to", "8", "--json"]) == 1
    assert "hudi-py upgrade" in json.loads(capsys.readouterr().out)["error"]["message"]
    assert main(["upgrade", t.path, "--to", "7"]) == 2  # a usage error
