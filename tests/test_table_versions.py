"""Table versions 8 and 9 as hudi_ds writes them, compared with the files Apache Hudi 1.x wrote (the reference
tables), and the version rules of a write (hoodie.write.table.version, a table's own version, bad input)."""

from __future__ import annotations

import re
from pathlib import Path

import fastavro
import pyarrow as pa
import pytest
from tables import REFERENCE_DIR, commit_metadata, hudi_rs, instant_file, rows

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate
from hudi_ds.config.properties import loads
from hudi_ds.errors import ConfigError, CorruptTableError, HudiDsError, UnsupportedTableError

COLS = ["uuid", "ts", "city", "fare"]
# reference tables Apache Hudi 1.0 (v8) and 1.1 (v9) wrote
REF_V8 = REFERENCE_DIR / "quickstart_mor_avro_v8_trips_8i3u1d"
REF_V9 = REFERENCE_DIR / "mor_avro_v9_txns_simple_meta"
# keys a reference table has for features of its own (metadata table, indexes, schema) that ours need not carry
_OWN_FEATURES = re.compile(r"hoodie\.table\.(metadata|index|create\.schema|partition\.fields|recordkey|cdc)|"
                           r"hoodie\.table\.(name|checksum)|hoodie\.datasource|hoodie\.table\.keygenerator")


def trips(ids, ts, city="sf", fare=1.0):
    ids = list(ids)
    return pa.table({"uuid": [f"u{i}" for i in ids], "ts": [ts] * len(ids), "city": [city] * len(ids),
                     "fare": [fare * i for i in ids]})


def make(tmp_path: Path, version: int, table_type: str = "MERGE_ON_READ", **options: str) -> HudiTable:
    return HudiTable.create(str(tmp_path / f"v{version}"), table_name="trips", record_key="uuid",
                            ordering_field="ts", partition_by="city", table_type=table_type, buckets=2,
                            options={"hoodie.write.table.version": str(version), **options})


def _props(path: Path) -> dict[str, str]:
    return loads((path / ".hoodie" / "hoodie.properties").read_text())


def _writer_schema(path: Path) -> dict:
    with open(path, "rb") as f:
        return fastavro.reader(f).writer_schema  # type: ignore[return-value]


@pytest.mark.parametrize("version, reference", [(8, REF_V8), (9, REF_V9)])
def test_files_are_shaped_as_apache_hudi_writes_them(tmp_path, version, reference):
    t = make(tmp_path, version)
    first = t.write(trips(range(6), 1))
    second = t.write(trips(range(3), 2))
    base = Path(t.path)

    # timeline: layout 2 names in .hoodie/timeline, completion after the requested time, nothing in .hoodie/ itself
    ours = sorted(p.name for p in (base / ".hoodie" / "timeline").iterdir() if p.is_file())
    pattern = re.compile(r"(\d{17})(?:_(\d{17}))?\.(deltacommit)(?:\.(requested|inflight))?")
    assert all(pattern.fullmatch(n) for n in ours), ours
    for n in ours:
        m = pattern.fullmatch(n)
        assert m is not None and (m.group(2) is None or m.group(2) > m.group(1))
    theirs = sorted(p.name for p in (reference / ".hoodie" / "timeline").iterdir() if "deltacommit" in p.name)
    assert [pattern.fullmatch(n) is not None for n in theirs] == [True] * len(theirs)
    assert not [p.name for p in (base / ".hoodie").iterdir() if p.is_file() and "commit" in p.name]

    # properties: every key the reference carries for a feature we have, with the same value where it is not ours
    mine, ref = _props(base), _props(reference)
    assert mine["hoodie.table.version"] == str(version) == ref["hoodie.table.version"]
    for key, value in ref.items():
        if _OWN_FEATURES.match(key):
            continue
        assert key in mine, key
        if key not in ("hoodie.table.initial.version", "hoodie.table.ordering.fields",
                       "hoodie.table.precombine.field"):  # the table's own columns
            assert mine[key] == value, key
    extra = set(mine) - set(ref) - {"hoodie.index.type", "hoodie.bucket.index.num.buckets",  # ours: bucket index
                                    "hoodie.table.base.file.format", "hoodie.table.timeline.timezone",
                                    "hoodie.populate.meta.fields", "hoodie.table.partition.fields",
                                    "hoodie.table.recordkey.fields", "hoodie.table.keygenerator.type"}
    assert not extra, f"keys Apache Hudi {version} does not write: {extra}"
    assert ("hoodie.table.ordering.fields" in mine) == (version == 9)
    assert ("hoodie.table.precombine.field" in mine) == (version == 8)

    # commit metadata: Avro with Hudi's schema, inflight too
    completed = instant_file(t, second, "deltacommit")
    ref_completed = next(p for p in (reference / ".hoodie" / "timeline").iterdir()
                         if p.name.endswith(".deltacommit") and "_" in p.name)
    assert _writer_schema(completed) == _writer_schema(ref_completed)
    assert _writer_schema(instant_file(t, second, "deltacommit", "inflight"))["name"].endswith("HoodieCommitMetadata")
    meta = commit_metadata(t, second, "deltacommit")
    assert meta["operationType"] == "UPSERT" and meta["extraMetadata"]["schema"]

    # log files: one new file per delta commit, named after it (version 1); the metadata table's are its own
    logs = sorted(p.name for p in base.rglob(".*.log.*") if ".hoodie" not in p.relative_to(base).parts)
    assert logs and all(re.fullmatch(rf"\.[0-9a-f-]+-0_{second}\.log\.1_\d+-\d+-\d+", n) for n in logs), logs
    assert not any(first in n for n in logs)
    assert rows(t.to_arrow(), COLS) == rows(hudi_rs(t.path), COLS)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_version_9_table_reads_the_same_as_version_6(tmp_path, table_type):
    """The same writes, services and reads on versions 6 and 9 give the same answers, with and without CDC."""
    results = []
    for version in (6, 9):
        t = make(tmp_path, version, table_type, **{"hoodie.table.cdc.enabled": "true",
                                                   "compaction.schedule.enabled": "false"})
        c1 = t.write(trips(range(10), 1))
        t.write(trips(range(5, 15), 2, fare=2.0))
        t.write(trips([1, 2], 0).select(["uuid", "city"]), operation="delete")
        t.write(trips(range(20, 23), 3, city="nyc"), operation="insert_overwrite")
        t.rollback(t.write(trips([99], 9)))
        if t.config.is_mor:
            assert len(t.compact()) == 1
        t.write(trips([4], 5, fare=5.0))
        # incremental ranges go by completion time on version 8+ (Hudi 1.x's rule)
        start = next(i.completion_time or c1 for i in t.timeline() if i.requested_time == c1)
        changes = t.changes(start)
        results.append((
            rows(t.to_arrow(), COLS), rows(hudi_rs(t.path), COLS), rows(t.to_arrow(as_of=c1), COLS),
            rows(changes, ["_change_type", "uuid"]) if "_change_type" in changes.column_names
            else rows(changes, changes.column_names[-4:]),
        ))
        assert validate(t)["ok"]
    assert results[0] == results[1]
    assert results[1][0] == results[1][1]


def test_an_existing_table_is_written_at_its_own_version(tmp_path):
    make(tmp_path, 9).write(trips(range(3), 1))
    again = HudiTable(str(tmp_path / "v9"))
    later = again.write(trips(range(3), 2))  # no option: the table's version
    assert again.config.version == 9
    assert instant_file(again, later, "deltacommit").name.startswith(f"{later}_")
    with pytest.raises(ConfigError, match="hudi-py downgrade"):
        HudiTable(str(tmp_path / "v9"), options={"hoodie.write.table.version": "6"}).write(trips([5], 3))
    kept = HudiTable(str(tmp_path / "v9"))
    assert kept.config.version == 9 and rows(kept.to_arrow(), ["uuid"]) == [("u0",), ("u1",), ("u2",)]


def test_versions_hudi_ds_does_not_write_are_refused(tmp_path):
    with pytest.raises(HudiDsError, match="hoodie.write.table.version"):
        make(tmp_path, 7)
    t = make(tmp_path, 9)
    t.write(trips(range(2), 1))
    props = Path(t.path) / ".hoodie" / "hoodie.properties"
    text = props.read_text().replace("hoodie.table.version=9", "hoodie.table.version=10")
    props.write_text(text)
    before = sorted(p.name for p in Path(t.path).rglob("*"))
    with pytest.raises(UnsupportedTableError, match="table version 10"):
        HudiTable(t.path).write(trips([3], 2))
    assert sorted(p.name for p in Path(t.path).rglob("*")) == before  # nothing written


def test_an_unreadable_instant_file_is_named(tmp_path):
    t = make(tmp_path, 9)
    t.write(trips(range(2), 1))
    second = t.write(trips(range(2), 2))
    instant_file(t, second, "deltacommit").write_bytes(b"Obj\x01garbage")
    with pytest.raises(CorruptTableError, match=second):
        HudiTable(t.path).write(trips([3], 3))
    report = validate(HudiTable(t.path))
    assert not report["ok"] and second in str(report)


def test_a_completion_time_before_its_instant_is_refused(tmp_path):
    t = make(tmp_path, 9)
    first = t.write(trips(range(2), 1))
    done = instant_file(t, first, "deltacommit")
    bad = done.with_name(f"{first}_{int(first) - 1000}.deltacommit")
    done.rename(bad)
    with pytest.raises(CorruptTableError, match=bad.name):
        HudiTable(t.path).write(trips([3], 3))
    report = validate(HudiTable(t.path))
    assert not report["ok"] and bad.name in str(report)


def test_a_pending_compaction_reads_the_logs_of_archived_delta_commits(tmp_path):
    """Archiving may move delta commits a pending compaction plans to read (beyond
    hoodie.compact.inline.max.delta.commits of them): on version 9 the executor places their logs by their
    commits' completion times, read from the LSM history; none is dropped. Without a metadata table, whose
    uncompacted deltacommits would hold the archiving back (as in Hudi)."""
    t = make(tmp_path, 9, **{"compaction.schedule.enabled": "false", "hoodie.archive.automatic": "false",
                             "hoodie.clean.automatic": "false", "hoodie.metadata.enable": "false"})
    model = {}
    for n in range(4):
        rows_ = trips(range(n * 3, n * 3 + 5), n, fare=n + 1.0)
        t.write(rows_)
        model.update({r["uuid"]: r["fare"] for r in rows_.to_pylist()})
    planned = t.schedule_compaction()
    assert planned is not None
    for n in range(4, 7):
        rows_ = trips(range(n, n + 2), n, fare=n + 1.0)
        t.write(rows_)
        model.update({r["uuid"]: r["fare"] for r in rows_.to_pylist()})
    archiving = HudiTable(t.path, options={"compaction.delta_commits": 1})
    archived = archiving.archive(min_commits=2, max_commits=3)
    assert archived and max(archived) < planned  # the delta commits the plan reads are in the history now
    assert t.run_compaction(planned) == [planned]
    got = {r["uuid"]: r["fare"] for r in t.to_arrow(columns=["uuid", "fare"]).to_pylist()}
    assert got == model
    assert rows(hudi_rs(t.path), ["uuid", "fare"]) == rows(t.to_arrow(), ["uuid", "fare"])


def test_archiving_keeps_the_delta_commits_the_next_compaction_counts(tmp_path):
    """As Hudi's archiver does for merge-on-read tables: the delta commits since the latest compaction stay
    active until there are hoodie.compact.inline.max.delta.commits of them, so archiving never starves the
    compaction trigger."""
    t = make(tmp_path, 9, **{"compaction.delta_commits": "5", "hoodie.keep.min.commits": "2",
                             "hoodie.keep.max.commits": "3", "hoodie.clean.automatic": "false",
                             "clean.retain_commits": "1"})
    for n in range(6):
        t.write(trips(range(2), n))
    actions = [i.action for i in t.timeline()]
    assert "commit" in actions  # the fifth delta commit triggered a compaction: none was archived before
    assert actions.count("deltacommit") >= 1
