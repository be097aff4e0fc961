"""Apache Hudi's cleaning policies on real tables: after a clean, the files left are exactly those a model of
Hudi's policy (CleanPlanner) keeps, the reads it promises are unchanged in our reader and in hudi-rs, and the
clean is recorded as Hudi records it. Driven through the Python API, the CLI and the clean after each write."""

from __future__ import annotations

import json
from datetime import timedelta
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli import main
from hudi_ds.config.option_parsing import parse_options
from hudi_ds.files.naming import parse_base_file, parse_cdc_file, parse_log_file
from hudi_ds.services.clean import CleanPolicy, clean
from hudi_ds.timeline import instant_to_datetime

COLS = ["id", "ts", "dt", "v"]
MANUAL = {"compaction.schedule.enabled": "false", "hoodie.clean.automatic": "false",
          "hoodie.archive.automatic": "false"}
Slices = dict[tuple[str, str], dict[str, set[str]]]  # (partition, file id) -> slice instant -> its files


def data(ids, ts: int) -> pa.Table:
    ids = list(ids)
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 2}" for i in ids],
                     "v": [float(i * ts) for i in ids]})


def build(path: Path, table_type: str, **options: object) -> HudiTable:
    """Upserts touching different keys (file groups get different numbers of versions), an insert overwrite of
    one partition (its file groups are replaced), and on merge-on-read compactions between them."""
    t = HudiTable.create(str(path), table_name="c", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, buckets=2, options={**MANUAL, **options})
    for ts, ids in enumerate([range(40), range(0, 40, 3), range(1, 40, 4), range(0, 40, 5), range(2, 40, 6)], 1):
        t.write(data(ids, ts))
        if table_type == "MERGE_ON_READ" and ts % 2 == 0:
            t.compact()
    t.write(data(range(0, 40, 2), 6), operation="insert_overwrite")  # replaces the file groups of d0
    t.write(data(range(1, 40, 7), 7))
    return t


def slices(t: HudiTable) -> Slices:
    """The table's file slices, read off the file names: a log or change-data file belongs to the slice of the
    base instant its name carries (table version 6)."""
    out: Slices = {}
    for p in Path(t.path).rglob("*"):
        rel = p.relative_to(t.path).as_posix()
        if not p.is_file() or rel.startswith(".hoodie"):
            continue
        partition, _, name = rel.rpartition("/")
        ref = parse_base_file(partition, name) or parse_log_file(partition, name) or parse_cdc_file(partition, name)
        if ref is not None:
            out.setdefault((partition, ref.file_id), {}).setdefault(ref.instant, set()).add(rel)
    return out


def files(s: Slices) -> set[str]:
    return {f for group in s.values() for fs in group.values() for f in fs}


def commits(t: HudiTable) -> list[str]:
    return [i.requested_time for i in t.timeline()
            if i.is_completed and i.action in ("commit", "deltacommit", "replacecommit")]


def replaced(t: HudiTable, before: str | None) -> set[tuple[str, str]]:
    timeline = t.load_timeline()
    return {(p, fid) for i in timeline.commits() if i.action == "replacecommit"
            and (before is None or i.requested_time < before)
            for p, ids in timeline.commit_metadata(i).replaced_file_ids().items() for fid in ids}


def kept_by_hudi(t: HudiTable, before: Slices, policy: str, retain: int, earliest: str | None) -> set[str]:
    """Hudi's CleanPlanner, as a model: KEEP_LATEST_FILE_VERSIONS keeps the newest N slices of each file group
    and no replaced file group; the window policies keep, per file group, every slice at or after the earliest
    commit to retain E, the newest slice before E and the latest slice, drop file groups replaced before E
    whole, and keep those replaced later whole (Hudi's file-system view leaves replaced groups out)."""
    gone = replaced(t, None if policy == "KEEP_LATEST_FILE_VERSIONS" else earliest)
    replaced_later = replaced(t, None) - gone
    kept: set[str] = set()
    for key, group in before.items():
        if key in gone:
            continue
        instants = sorted(group, reverse=True)
        if key in replaced_later:
            kept |= {f for i in instants for f in group[i]}
            continue
        if policy == "KEEP_LATEST_FILE_VERSIONS":
            chosen = instants[:retain]
        else:
            assert earliest is not None
            chosen = [i for i in instants if i >= earliest] + [i for i in instants if i < earliest][:1]
            chosen.append(instants[0])
        kept |= {f for i in chosen for f in group[i]}
    return kept


def snap(t: HudiTable, **kw) -> list:
    return rows(t.to_arrow(**kw), COLS)


def avro(path: Path) -> dict:
    with open(path, "rb") as f:
        return next(iter(fastavro.reader(f)))


def the_clean(t: HudiTable, instant: str) -> tuple[dict, dict]:
    hoodie = Path(t.path) / ".hoodie"
    return avro(hoodie / f"{instant}.clean.requested"), avro(hoodie / f"{instant}.clean")


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("options,policy,retain", [
    ({"hoodie.clean.policy": "KEEP_LATEST_COMMITS", "hoodie.clean.commits.retained": 3}, "KEEP_LATEST_COMMITS", 3),
    ({"hoodie.cleaner.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.cleaner.fileversions.retained": 1},
     "KEEP_LATEST_FILE_VERSIONS", 1),  # Apache Hudi 0.14's spelling
    ({"hoodie.clean.fileversions.retained": 2}, "KEEP_LATEST_FILE_VERSIONS", 2),  # the policy inferred, as Hudi does
    ({"clean.policy": "KEEP_LATEST_FILE_VERSIONS", "clean.retain_file_versions": 3}, "KEEP_LATEST_FILE_VERSIONS", 3),
])
def test_clean_keeps_what_hudis_policy_keeps(tmp_path, table_type, options, policy, retain):
    t = build(tmp_path / "t", table_type)
    before, snapshot, done = slices(t), snap(t), commits(t)
    recorded = {c: snap(t, as_of=c) for c in done}
    earliest = done[-retain] if policy == "KEEP_LATEST_COMMITS" else None

    instant = HudiTable(t.path, options=options).clean()

    assert instant is not None
    expected = kept_by_hudi(t, before, policy, retain, earliest)
    assert files(slices(t)) == expected and expected < files(before)
    assert snap(t) == snapshot == rows(hudi_rs(t.path), COLS)
    for c in done:
        if earliest is not None and c >= earliest:
            assert snap(t, as_of=c) == recorded[c]
    if earliest is not None:
        assert rows(hudi_rs(t.path, as_of=earliest), COLS) == recorded[earliest]
    plan, meta = the_clean(t, instant)
    assert plan["policy"] == policy
    assert {pm["policy"] for pm in meta["partitionMetadata"].values()} == {policy}
    assert meta["earliestCommitToRetain"] == (earliest or "")  # Hudi records none for file versions
    assert (plan["earliestInstantToRetain"] or {}).get("timestamp") == earliest
    assert HudiTable(t.path, options=options).clean() is None  # nothing more to delete


def test_keep_latest_by_hours_keeps_the_commits_of_the_last_hours(tmp_path):
    t = build(tmp_path / "t", "COPY_ON_WRITE")
    before, done = slices(t), commits(t)
    recorded = {c: snap(t, as_of=c) for c in done}
    earliest = done[3]
    now = instant_to_datetime(earliest) + timedelta(hours=5)  # the clean runs 5 hours after commit 4

    instant = clean(t, CleanPolicy("KEEP_LATEST_BY_HOURS", 5), now=now)

    assert instant is not None
    assert files(slices(t)) == kept_by_hudi(t, before, "KEEP_LATEST_BY_HOURS", 5, earliest)
    assert all(snap(t, as_of=c) == recorded[c] for c in done if c >= earliest)
    plan, meta = the_clean(t, instant)
    assert plan["policy"] == "KEEP_LATEST_BY_HOURS" and meta["earliestCommitToRetain"] == earliest
    # a minute later than the latest commit plus the window: no commit in the window, nothing to delete (as Hudi)
    later = instant_to_datetime(done[-1]) + timedelta(hours=5, minutes=1)
    assert clean(t, CleanPolicy("KEEP_LATEST_BY_HOURS", 5), now=later) is None


def test_hours_option_counts_back_from_now(tmp_path):
    """hoodie.clean.hours.retained alone selects KEEP_LATEST_BY_HOURS: every commit of this test is younger than
    an hour, so the window starts at the first commit and nothing older than it exists to delete."""
    t = build(tmp_path / "t", "COPY_ON_WRITE")
    before = files(slices(t))
    assert HudiTable(t.path, options={"hoodie.clean.hours.retained": 1}).clean() is None
    assert files(slices(t)) == before


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_clean_after_each_write_follows_the_policy(tmp_path, table_type):
    """The clean every write runs (the same service Spark writes and the streaming sink run) takes the policy from
    the options: with one file version retained, each write leaves one slice per file group."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="c", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type=table_type, buckets=2,
                         options={"hoodie.cleaner.fileversions.retained": 1, "compaction.delta_commits": 2})
    for ts in range(1, 7):
        t.write(data(range(0, 40, ts), ts))
        if table_type == "COPY_ON_WRITE" or ts % 2 == 0:  # on merge-on-read, compaction makes new slices
            assert all(len(group) == 1 for group in slices(t).values()), slices(t)
    assert snap(t) == rows(hudi_rs(t.path), COLS)
    cleans = [i for i in t.timeline() if i.action == "clean" and i.is_completed]
    assert cleans and all(the_clean(t, c.requested_time)[0]["policy"] == "KEEP_LATEST_FILE_VERSIONS" for c in cleans)


def test_a_pending_compaction_keeps_its_slice_under_file_versions(tmp_path):
    """The slice a pending compaction reads counts as one of the N versions and is never deleted (Hudi's
    CleanPlanner): the compaction still runs after the clean, and the reads stay."""
    t = build(tmp_path / "t", "MERGE_ON_READ")
    t.write(data(range(0, 40, 2), 8))
    pending = t.schedule_compaction(1)
    assert pending is not None
    before, snapshot = slices(t), snap(t)
    assert HudiTable(t.path, options={"hoodie.clean.fileversions.retained": 1}).clean() is not None
    assert files(slices(t)) == kept_by_hudi(t, before, "KEEP_LATEST_FILE_VERSIONS", 1, None)
    assert t.run_compaction() == [pending]
    assert snap(t) == snapshot == rows(hudi_rs(t.path), COLS)


def test_cli_cleans_by_the_policy_options(tmp_path, capsys):
    t = build(tmp_path / "t", "COPY_ON_WRITE")
    before = slices(t)
    rc = main(["clean", t.path, "-o", "hoodie.clean.policy=KEEP_LATEST_FILE_VERSIONS",
               "-o", "hoodie.clean.fileversions.retained=1", "--json"])
    out = json.loads(capsys.readouterr().out)
    assert rc == 0 and out["result"]
    assert files(slices(t)) == kept_by_hudi(t, before, "KEEP_LATEST_FILE_VERSIONS", 1, None)
    assert the_clean(t, out["result"])[0]["policy"] == "KEEP_LATEST_FILE_VERSIONS"


@pytest.mark.parametrize("version", [{}, {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true"}],
                         ids=["v6", "v9-metadata"])
def test_a_clean_lists_the_table_only_when_something_new_can_go(tmp_path, monkeypatch, version):
    """The clean after each log-only deltacommit (merge-on-read, bucket index) plans nothing without listing the
    table (Apache Hudi's incremental cleaning, narrowed to the commits since the last clean's window), and leaves
    exactly what a full clean leaves: after every write, a full plan at the same earliest commit deletes nothing."""
    from hudi_ds.files.view import FileSystemView, Visibility
    from hudi_ds.services import clean as cleaning
    from hudi_ds.services.clean import earliest_commit_to_retain, plan_clean

    policy = CleanPolicy("KEEP_LATEST_COMMITS", 2)
    t = HudiTable.create(str(tmp_path / "t"), table_name="c", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="MERGE_ON_READ", buckets=2,
                         options={"hoodie.clean.commits.retained": 2, "compaction.delta_commits": 3,
                                  "hoodie.archive.automatic": "false", **version})
    decided: list[bool] = []
    narrowed = cleaning._nothing_new_to_clean
    monkeypatch.setattr(cleaning, "_nothing_new_to_clean", lambda tl, e: decided.append(narrowed(tl, e)) or decided[-1])
    deleted = 0
    for ts in range(1, 15):
        before = files(slices(t))
        t.write(data(range(ts % 3, 40, 1 + ts % 4), ts))
        deleted += len(before - files(slices(t)))
        timeline = t.load_timeline()
        earliest = earliest_commit_to_retain(timeline, policy)
        if earliest is not None:
            view = FileSystemView(t.storage, t.config, timeline, Visibility.of(timeline, None, timeline.layout))
            assert plan_clean(t.storage, timeline, view, policy, earliest.requested_time) == {}, ts
    assert True in decided and False in decided and deleted, decided
    assert snap(t) == rows(hudi_rs(t.path), COLS)


@pytest.mark.parametrize("key", ["hoodie.clean.incremental.enabled", "hoodie.cleaner.incremental.mode"])
def test_incremental_cleaning_off_lists_the_table_at_every_clean(tmp_path, monkeypatch, key):
    """hoodie.clean.incremental.enabled=false (Apache Hudi's key; 0.x: hoodie.cleaner.incremental.mode): every
    clean plans from a full listing, and it deletes what the incremental clean deletes."""
    from hudi_ds.services import clean as cleaning

    assert CleanPolicy.of(parse_options({key: "false"})).incremental is False
    assert CleanPolicy.of(parse_options({})).incremental is True
    listed: list[int] = []
    full_plan = cleaning.plan_clean
    monkeypatch.setattr(cleaning, "plan_clean", lambda *a: listed.append(1) or full_plan(*a))
    kept = {}
    for incremental in ("false", "true"):
        t = HudiTable.create(str(tmp_path / incremental), table_name="c", record_key="id", ordering_field="ts",
                             partition_by="dt", table_type="MERGE_ON_READ", buckets=2,
                             options={"hoodie.clean.commits.retained": 2, "compaction.delta_commits": 3,
                                      "hoodie.archive.automatic": "false", key: incremental})
        listed.clear()
        for ts in range(1, 10):
            t.write(data(range(ts % 3, 40, 1 + ts % 4), ts))
        kept[incremental] = (len(listed), sorted(len(fs) for group in slices(t).values() for fs in group.values()))
    assert kept["false"][0] > kept["true"][0], kept  # a full plan at every clean with a window, or fewer
    assert kept["false"][1] == kept["true"][1], kept  # the same slices left, of as many files each
