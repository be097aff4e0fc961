"""The `hudi-py` command: every command on a table written here and on reference tables read in place, in
rich and --json modes; validate catching damage; bad input; one run of the installed entry point."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_ds import HudiTable
from hudi_ds.cli import main, parse_where

COMMIT_ACTIONS = ("commit", "deltacommit", "replacecommit")
V6_MOR = "quickstart_mor_avro_v6_trips_8i3d"  # 8 inserts, then 3 deletes in one delete block: 5 rows (8 RO)
V8_MOR = "quickstart_mor_avro_v8_trips_8i3u1d"  # deltacommits, an indexing instant, a compaction: 6 rows
V6_OVERWRITE = "cow_v6_simplekeygen_nonhivestyle_overwritetable"  # 2 commits + insert_overwrite_table: 1 row


def run(capsys: pytest.CaptureFixture[str], *args: str) -> tuple[int, str, str]:
    rc = main([str(a) for a in args])
    out, err = capsys.readouterr()
    return rc, out, err


def run_json(capsys: pytest.CaptureFixture[str], *args: str, expect: int = 0) -> Any:
    rc, out, err = run(capsys, *args, "--json")
    assert rc == expect, f"exit {rc}: {err}{out}"
    return json.loads(out)


@pytest.fixture
def trips(tmp_path: Path) -> dict[str, Any]:
    """A MOR table in 3 partitions with 4 buckets: insert 4, upsert 1, delete 1 (3 rows left)."""
    path = tmp_path / "trips"
    t = HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts",
                         partition_by="city", table_type="MERGE_ON_READ", buckets=4)
    c1 = t.write(pa.table({"uuid": ["a", "b", "c", "d"], "ts": [1, 1, 1, 1], "city": ["sf", "nyc", "sf", "la"],
                           "fare": [10.0, 20.0, 5.0, 7.0]}))
    c2 = t.write(pa.table({"uuid": ["a"], "ts": [2], "city": ["sf"], "fare": [12.5]}))
    c3 = t.write(pa.table({"uuid": ["b"], "city": ["nyc"]}), operation="delete")
    return {"path": path, "table": t, "commits": [c1, c2, c3]}


def _fare(rows: list[dict[str, Any]]) -> dict[str, float]:
    return {r["uuid"]: r["fare"] for r in rows}


# ---- a table written by hudi_ds ---------------------------------------------------------------------------------

def test_info(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "info", trips["path"])
    cfg = r["config"]
    assert (cfg["name"], cfg["table_type"], cfg["version"], cfg["layout_version"]) == ("trips", "MERGE_ON_READ", 6, 1)
    assert (cfg["record_key_fields"], cfg["ordering_field"], cfg["partition_fields"]) == (["uuid"], "ts", ["city"])
    assert (cfg["num_buckets"], cfg["index_type"], cfg["hive_style"]) == (4, "BUCKET", False)
    assert cfg["key_generator"].endswith("SimpleKeyGenerator")
    assert [(c["name"], c["type"]) for c in r["schema"]] == [
        ("uuid", "string"), ("ts", "int64"), ("city", "string"), ("fare", "double")]
    assert r["file_groups"] == 4  # a, c in two sf buckets; b in nyc; d in la
    assert r["partitions"] == {"count": 3, "first": ["la", "nyc", "sf"]}
    on_disk = [p for p in trips["path"].rglob("*") if p.is_file() and ".hoodie" not in p.parts
               and p.name != ".hoodie_partition_metadata"]
    assert r["size"]["files"] == len(on_disk) == 6  # 4 base files + 2 log files
    assert r["size"]["bytes"] == sum(p.stat().st_size for p in on_disk)
    assert r["latest_commit"]["requested_time"] == trips["commits"][-1]
    assert r["latest_commit"]["action"] == "deltacommit"
    assert r["timeline"] == {"instants": 3, "commits": 3, "pending": 0, "archived_instants": False}

    rc, out, _ = run(capsys, "info", trips["path"])
    assert rc == 0
    for text in ("trips", "MERGE_ON_READ", "SimpleKeyGenerator", "3: la, nyc, sf", trips["commits"][-1], "fare",
                 "double"):
        assert text in out


def test_timeline(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "timeline", trips["path"])
    rows = r["instants"]
    assert [i["requested_time"] for i in rows] == trips["commits"]
    assert {(i["action"], i["state"]) for i in rows} == {("deltacommit", "completed")}
    assert [i["operation"] for i in rows] == ["UPSERT", "UPSERT", "DELETE"]
    assert [i["rows_written"] for i in rows] == [4, 1, 0]
    assert [i["rows_deleted"] for i in rows] == [0, 0, 1]
    assert [i["files"] for i in rows] == [4, 1, 1]
    assert all(i["bytes_written"] > 0 for i in rows)

    rc, out, _ = run(capsys, "timeline", trips["path"])
    assert rc == 0
    assert all(c in out for c in trips["commits"]) and "deltacommit" in out and "DELETE" in out


def test_timeline_all_shows_rollbacks(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "rollback", trips["path"], trips["commits"][-1])
    rollback_instant = r["result"]["rollback_instant"]
    assert r["result"]["rolled_back"] == trips["commits"][-1] and rollback_instant

    r = run_json(capsys, "timeline", trips["path"])
    assert [i["requested_time"] for i in r["instants"]] == trips["commits"][:2] and r["hidden"] == 1
    r = run_json(capsys, "timeline", trips["path"], "--all")
    last = r["instants"][-1]
    assert (last["requested_time"], last["action"], last["state"]) == (rollback_instant, "rollback", "completed")
    assert last["rolled_back"] == [trips["commits"][-1]]
    rc, out, _ = run(capsys, "timeline", trips["path"], "--all")
    assert rc == 0 and f"rolled back {trips['commits'][-1]}" in out


def test_files(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "files", trips["path"])
    groups = r["file_groups"]
    assert r["summary"] == {"file_groups": 4, "base_files": 4, "log_files": 2,
                            "bytes": sum(g["base_bytes"] + g["log_bytes"] for g in groups)}
    assert sorted(g["partition"] for g in groups) == ["la", "nyc", "sf", "sf"]
    for g in groups:
        assert g["bucket"] == int(g["file_id"][:8]) and 0 <= g["bucket"] < 4
        assert g["base_instant"] == trips["commits"][0] and g["slices"] == 1
        base = trips["path"] / g["partition"] / g["base_file"]
        assert g["base_bytes"] == base.stat().st_size
        assert g["log_bytes"] == sum((trips["path"] / g["partition"] / n).stat().st_size
                                     for n in g["log_file_names"])
    logs = {g["partition"]: g["log_files"] for g in groups if g["log_files"]}
    assert logs == {"sf": 1, "nyc": 1}  # the upsert of a, the delete of b

    r = run_json(capsys, "files", trips["path"], "--partition", "sf")
    assert r["partition"] == "sf" and {g["partition"] for g in r["file_groups"]} == {"sf"}
    assert r["summary"]["file_groups"] == 2

    rc, out, _ = run(capsys, "files", trips["path"])
    assert rc == 0 and all(g["file_id"] in out and g["base_file"] in out for g in groups)
    assert "4 file groups, 4 base files, 2 log files" in out

    rc, out, err = run(capsys, "files", trips["path"], "--partition", "paris")
    assert rc == 1 and "partition 'paris' is not in the table" in err and "Traceback" not in err


def test_show(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    path, first = trips["path"], trips["commits"][0]
    r = run_json(capsys, "show", path)
    assert r["num_rows"] == 3 and r["columns"] == ["uuid", "ts", "city", "fare"]
    assert _fare(r["rows"]) == {"a": 12.5, "c": 5.0, "d": 7.0}

    r = run_json(capsys, "show", path, "--where", "city = sf")
    assert _fare(r["rows"]) == {"a": 12.5, "c": 5.0}
    r = run_json(capsys, "show", path, "--where", "fare >= 6", "--where", "city != la")
    assert _fare(r["rows"]) == {"a": 12.5}
    r = run_json(capsys, "show", path, "--where", "uuid in a,d", "--columns", "uuid,fare")
    assert r["columns"] == ["uuid", "fare"] and _fare(r["rows"]) == {"a": 12.5, "d": 7.0}
    r = run_json(capsys, "show", path, "--where", "uuid not in (a, d)")
    assert _fare(r["rows"]) == {"c": 5.0}
    r = run_json(capsys, "show", path, "--as-of", first)
    assert r["num_rows"] == 4 and _fare(r["rows"])["a"] == 10.0
    r = run_json(capsys, "show", path, "--read-optimized")  # base files only: before the upsert and delete
    assert _fare(r["rows"]) == {"a": 10.0, "b": 20.0, "c": 5.0, "d": 7.0}
    r = run_json(capsys, "show", path, "--limit", "1")
    assert (r["num_rows"], len(r["rows"]), r["truncated"]) == (3, 1, True)
    r = run_json(capsys, "show", path, "--meta", "--where", "uuid = a")
    assert r["rows"][0]["_hoodie_commit_time"] == trips["commits"][1]

    rc, out, _ = run(capsys, "show", path, "--where", "city = sf")
    assert rc == 0 and "12.5" in out and "2 rows" in out and "_hoodie" not in out

    rc, _, err = run(capsys, "show", path, "--where", "nosuch = 1")
    assert rc == 1 and "nosuch" in err
    rc, _, err = run(capsys, "show", path, "--where", "fare ~ 1")
    assert rc == 2 and "cannot read 'fare ~ 1' as a filter" in err
    rc, _, err = run(capsys, "show", path, "--as-of", "yesterday")
    assert rc == 2 and "instant time" in err


@pytest.mark.parametrize(("text", "expected"), [
    ("city = sf", ("city", "=", "sf")),
    ("fare>=10", ("fare", ">=", "10")),
    ("name == 'San Francisco'", ("name", "==", "San Francisco")),
    ("id in a,b,c", ("id", "in", ["a", "b", "c"])),
    ("id NOT IN [1, 2]", ("id", "not in", ["1", "2"])),
    ("x != ", None), ("id in ", None), ("just words", None),
])
def test_parse_where(text: str, expected: Any) -> None:
    if expected is None:
        with pytest.raises(Exception, match=r"filter|value"):
            parse_where(text)
    else:
        assert parse_where(text) == expected


def test_rollback(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    rc, out, _ = run(capsys, "rollback", trips["path"], trips["commits"][-1])
    assert rc == 0 and f"rolled back {trips['commits'][-1]}" in out
    r = run_json(capsys, "show", trips["path"])
    assert _fare(r["rows"]) == {"a": 12.5, "b": 20.0, "c": 5.0, "d": 7.0}  # the delete is undone
    rc, _, err = run(capsys, "rollback", trips["path"], trips["commits"][0])  # not the latest any more
    assert rc == 1 and "not the latest commit" in err
    r = run_json(capsys, "rollback", trips["path"], "20000101000000000", expect=1)
    assert r["error"]["type"] == "InstantNotFoundError"


# ---- validate ---------------------------------------------------------------------------------------------------

def test_validate_healthy(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "validate", trips["path"])
    assert r["ok"] and r["errors"] == [] and r["warnings"] == []
    status = {c["name"]: c["status"] for c in r["checks"]}
    assert status.pop("metadata table lists the committed files") == "skipped"  # the table has none
    assert status.pop("metadata table in step with the timeline") == "skipped"
    assert status.pop("column and partition statistics match the files") == "skipped"
    assert status.pop("record index maps every key to its file group") == "skipped"
    assert status.pop("secondary indexes hold every row's value") == "skipped"
    assert set(status.values()) == {"ok"} and len(status) == 8
    assert {c["name"]: c["detail"] for c in r["checks"]}["snapshot reads"] == "3 rows"
    rc, out, _ = run(capsys, "validate", trips["path"])
    assert rc == 0 and "table is valid" in out


def test_validate_missing_base_file(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    victim = next((trips["path"] / "la").glob("*.parquet"))
    victim.unlink()
    rel = f"la/{victim.name}"
    r = run_json(capsys, "validate", trips["path"], expect=1)
    assert not r["ok"]
    failed = {c["name"] for c in r["checks"] if c["status"] == "failed"}
    assert {"committed files exist", "snapshot reads"} <= failed
    assert any(rel in e and "missing" in e for e in r["errors"])
    rc, out, _ = run(capsys, "validate", trips["path"])
    assert rc == 1 and rel in out and "problems found" in out


@pytest.mark.parametrize("rename", ["unknown-instant", "unknown-version"])
def test_validate_orphan_log_file(trips: dict[str, Any], capsys: pytest.CaptureFixture[str], rename: str) -> None:
    log = next((trips["path"] / "sf").glob(".*.log.*"))
    fid_instant, _, rest = log.name.partition(".log.")
    fid, _, instant = fid_instant.rpartition("_")
    if rename == "unknown-instant":
        name = f"{fid}_20991231235959999.log.{rest}"
        reason = "20991231235959999 in its name is not on the timeline"
    else:
        name = f"{fid_instant}.log.7_{rest.partition('_')[2]}"
        reason = f"commit {trips['commits'][1]} wrote its blocks but does not list it"
    shutil.copy(log, log.parent / name)
    r = run_json(capsys, "validate", trips["path"], expect=1)
    orphans = next(c for c in r["checks"] if c["name"] == "no orphan data files")
    assert orphans["status"] == "failed" and len(orphans["errors"]) == 1
    assert f"orphan file sf/{name}" in orphans["errors"][0] and reason in orphans["errors"][0]
    rc, out, _ = run(capsys, "validate", trips["path"])
    assert rc == 1 and f"sf/{name}" in out


def test_validate_names_a_staged_copy_other_readers_take_for_a_log(trips: dict[str, Any],
                                                                     capsys: pytest.CaptureFixture[str]) -> None:
    log = next((trips["path"] / "sf").glob(".*.log.*"))
    stray = log.with_name(f".{log.name}.0123456789abcdef0123456789abcdef.tmp")  # as hudi_ds staged it before
    shutil.copy(log, stray)
    harmless = log.with_name(".hudi_ds~" + log.name.replace(".", "~") + "~0123456789abcdef.tmp")
    shutil.copy(log, harmless)
    r = run_json(capsys, "validate", trips["path"], expect=1)
    orphans = next(c for c in r["checks"] if c["name"] == "no orphan data files")
    assert len(orphans["errors"]) == 1 and f"stray file sf/{stray.name}" in orphans["errors"][0]
    stray.unlink()
    assert run_json(capsys, "validate", trips["path"])["ok"]


def test_validate_orphan_base_file_and_pending_warning(trips: dict[str, Any],
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    base = next((trips["path"] / "la").glob("*.parquet"))
    fid = base.name.split("_")[0]
    orphan = base.with_name(f"{fid}_0-0-0_20991231235959999.parquet")
    shutil.copy(base, orphan)
    pending = "20991231235959998"
    (trips["path"] / ".hoodie" / f"{pending}.deltacommit.requested").write_bytes(b"")
    r = run_json(capsys, "validate", trips["path"], expect=1)
    assert any(f"la/{orphan.name}" in e for e in r["errors"])
    assert any(pending in w and "pending deltacommit" in w for w in r["warnings"])


def test_validate_extra_group_in_bucket(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    groups = run_json(capsys, "files", trips["path"], "--partition", "la")["file_groups"]
    bucket = groups[0]["bucket"]
    base = trips["path"] / "la" / groups[0]["base_file"]
    twin_id = f"{bucket:08d}-0000-0000-0000-000000000000-0"
    shutil.copy(base, base.with_name(f"{twin_id}_0-0-0_{trips['commits'][0]}.parquet"))
    r = run_json(capsys, "validate", trips["path"], expect=1)
    check = next(c for c in r["checks"] if c["name"] == "one file group per bucket")
    assert check["status"] == "failed" and f"bucket {bucket} has 2 live file groups" in check["errors"][0]


# ---- reference tables written by Apache Hudi ---------------------------------------------------------------------

@pytest.mark.parametrize(("name", "rows", "groups", "commits"), [
    (V6_MOR, 5, 3, 2), (V8_MOR, 6, 3, 7), (V6_OVERWRITE, 1, 1, 3),
])
def test_reference_table(reference_dir: Path, capsys: pytest.CaptureFixture[str], name: str, rows: int,
                         groups: int, commits: int) -> None:
    path = reference_dir / name
    table = HudiTable(str(path))
    before = sorted(p.name for p in path.rglob("*"))

    info = run_json(capsys, "info", path)
    assert info["config"]["name"] == table.config.name
    assert info["config"]["version"] == table.config.version
    assert info["file_groups"] == groups
    assert [c["name"] for c in info["schema"]] == table.schema.names
    latest = max((i for i in table.timeline() if i.is_completed and i.action in COMMIT_ACTIONS),
                 key=lambda i: i.completion_time or i.requested_time)
    assert info["latest_commit"]["requested_time"] == latest.requested_time

    tl = run_json(capsys, "timeline", path)
    expected = [i for i in table.timeline() if i.is_commit_like]
    assert len(tl["instants"]) == len(expected) == commits
    assert [(i["requested_time"], i["action"], i["completion_time"]) for i in tl["instants"]] == [
        (i.requested_time, i.action, i.completion_time) for i in expected]
    everything = run_json(capsys, "timeline", path, "--all")
    assert len(everything["instants"]) == len(table.timeline())

    files = run_json(capsys, "files", path)
    assert files["summary"]["file_groups"] == groups
    shown = run_json(capsys, "show", path, "--limit", "0")
    assert shown["num_rows"] == rows == len(shown["rows"])
    valid = run_json(capsys, "validate", path)
    assert valid["ok"] and valid["errors"] == []

    for command in ("info", "timeline", "files", "show", "validate"):
        rc, out, err = run(capsys, command, path)
        assert rc == 0, err
        assert out.strip()
    assert sorted(p.name for p in path.rglob("*")) == before  # read in place, nothing written


def test_reference_v6_counts(reference_dir: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = reference_dir / V6_MOR
    tl = run_json(capsys, "timeline", path)["instants"]
    assert [(i["requested_time"], i["rows_written"], i["rows_deleted"]) for i in tl] == [
        ("20250618054711154", 8, 0), ("20250618054714114", 0, 3)]
    assert run_json(capsys, "show", path, "--read-optimized")["num_rows"] == 8
    assert run_json(capsys, "show", path, "--as-of", "20250618054711154")["num_rows"] == 8
    sf = run_json(capsys, "show", path, "--where", "city = san_francisco", "--limit", "0")
    assert sf["num_rows"] == len(sf["rows"]) and {r["city"] for r in sf["rows"]} == {"san_francisco"}
    files = run_json(capsys, "files", path, "--partition", "city=san_francisco")["file_groups"]
    assert len(files) == 1 and files[0]["log_files"] == 1 and files[0]["bucket"] is None


def test_reference_rollback_on_a_copy(reference_dir: Path, tmp_path: Path,
                                      capsys: pytest.CaptureFixture[str]) -> None:
    v6 = shutil.copytree(reference_dir / V6_MOR, tmp_path / "v6")
    r = run_json(capsys, "rollback", v6, "20250618054714114")
    assert r["result"]["rolled_back"] == "20250618054714114"
    assert run_json(capsys, "show", v6)["num_rows"] == 8  # the 3 deletes are undone
    assert run_json(capsys, "validate", v6)["ok"]

    v8 = shutil.copytree(reference_dir / V8_MOR, tmp_path / "v8")  # its metadata table (and secondary index) kept
    r = run_json(capsys, "rollback", v8, "20251220210130911")
    assert r["result"]["rolled_back"] == "20251220210130911"
    report = run_json(capsys, "validate", v8)
    assert report["ok"] and {c["name"]: c["status"] for c in report["checks"]}[
        "secondary indexes hold every row's value"] == "ok"


# ---- table services ----------------------------------------------------------------------------------------------

def _needs(method: str) -> None:
    if not hasattr(HudiTable, method):
        pytest.skip(f"HudiTable.{method}() is not implemented yet")


def test_compact(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _needs("compact")
    before = _fare(run_json(capsys, "show", trips["path"])["rows"])
    r = run_json(capsys, "compact", trips["path"])
    assert r["command"] == "compact"
    assert _fare(run_json(capsys, "show", trips["path"])["rows"]) == before
    assert run_json(capsys, "files", trips["path"])["summary"]["log_files"] == 0
    assert _fare(run_json(capsys, "show", trips["path"], "--read-optimized")["rows"]) == before
    assert run_json(capsys, "validate", trips["path"])["ok"]
    rc, out, _ = run(capsys, "compact", trips["path"])
    assert rc == 0 and "compact" in out


def test_clean(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _needs("clean")
    before = _fare(run_json(capsys, "show", trips["path"])["rows"])
    if hasattr(HudiTable, "compact"):
        run_json(capsys, "compact", trips["path"])
    r = run_json(capsys, "clean", trips["path"], "--retain-commits", "1")
    assert r["command"] == "clean"
    assert _fare(run_json(capsys, "show", trips["path"])["rows"]) == before
    assert run_json(capsys, "validate", trips["path"])["ok"]
    rc, out, _ = run(capsys, "clean", trips["path"])
    assert rc == 0 and "clean" in out


def test_archive(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    _needs("archive")
    before = _fare(run_json(capsys, "show", trips["path"])["rows"])
    r = run_json(capsys, "archive", trips["path"])
    assert r["command"] == "archive"
    assert _fare(run_json(capsys, "show", trips["path"])["rows"]) == before
    assert run_json(capsys, "validate", trips["path"])["ok"]
    rc, out, _ = run(capsys, "archive", trips["path"])
    assert rc == 0 and "archive" in out


@pytest.mark.parametrize("command", ["compact", "clean", "archive"])
def test_service_missing(trips: dict[str, Any], capsys: pytest.CaptureFixture[str],
                         monkeypatch: pytest.MonkeyPatch, command: str) -> None:
    monkeypatch.delattr(HudiTable, command, raising=False)
    rc, out, err = run(capsys, command, trips["path"], "--json")
    assert rc == 1 and f"no HudiTable.{command}()" in err
    assert json.loads(out)["error"]["type"] == "CliError"


def test_service_refuses_tables_it_would_corrupt(reference_dir: Path, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    v8 = shutil.copytree(reference_dir / V8_MOR, tmp_path / "v8")
    props = v8 / ".hoodie" / "hoodie.properties"  # a metadata partition hudi_ds does not maintain
    props.write_text(props.read_text().replace("hoodie.table.metadata.partitions=", "hoodie.table.metadata.partitions="
                                                                                    "bloom_filters,"))
    for command in ("compact", "clean", "archive"):
        rc, _, err = run(capsys, command, v8)
        assert rc == 1 and "metadata table" in err and "hoodie.metadata.enable=false" in err
    props.write_text(props.read_text().replace("hoodie.table.version=8", "hoodie.table.version=10"))
    rc, _, err = run(capsys, "compact", v8)
    assert rc == 1 and "table version 10" in err


# ---- bad input ---------------------------------------------------------------------------------------------------

def test_not_a_table(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    for command in ("info", "timeline", "files", "show", "validate", "rollback", "compact", "clean", "archive"):
        extra = ["20240101000000000"] if command == "rollback" else []
        rc, out, err = run(capsys, command, tmp_path, *extra)
        assert rc == 1, command
        assert "is not a Hudi table" in err and "HudiTable.create" in err and "Traceback" not in err
        assert err.count("\n") == 1 and out == ""
    r = run_json(capsys, "info", tmp_path / "missing", expect=1)
    assert r["error"]["type"] == "TableNotFoundError" and "is not a Hudi table" in r["error"]["message"]


def test_usage_errors(trips: dict[str, Any], capsys: pytest.CaptureFixture[str]) -> None:
    assert run(capsys, "frobnicate", trips["path"])[0] == 2
    assert run(capsys)[0] == 2
    assert run(capsys, "info")[0] == 2  # no PATH
    assert run(capsys, "show", trips["path"], "--limit", "-1")[0] == 2
    assert run(capsys, "clean", trips["path"], "--retain-commits", "0")[0] == 2
    assert run(capsys, "rollback", trips["path"], "not-a-time")[0] == 2
    rc, out, _ = run(capsys, "--help")
    assert rc == 0 and "validate" in out
    # --json before the command works too
    rc, out, _ = run(capsys, "--json", "info", trips["path"])
    assert rc == 0 and json.loads(out)["config"]["name"] == "trips"


def test_installed_entry_point(trips: dict[str, Any]) -> None:
    script = Path(sys.executable).parent / "hudi-py"
    if not script.exists():
        pytest.skip(f"{script} is missing; run `pip install -e .`")
    done = subprocess.run([str(script), "timeline", str(trips["path"]), "--json"], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert [i["requested_time"] for i in json.loads(done.stdout)["instants"]] == trips["commits"]
    bad = subprocess.run([str(script), "nonsense"], capture_output=True, text=True, timeout=120)
    assert bad.returncode == 2 and "invalid choice" in bad.stderr
    missing = subprocess.run([str(script), "info", str(trips["path"] / "nope")], capture_output=True, text=True,
                             timeout=120)
    assert missing.returncode == 1 and "is not a Hudi table" in missing.stderr
    assert "Traceback" not in missing.stderr


def test_metadata_shows_what_the_files_partition_lists(trips: dict[str, Any], tmp_path: Path,
                                                       capsys: pytest.CaptureFixture[str]) -> None:
    r = run_json(capsys, "metadata", trips["path"])  # a version 6 table: none
    assert r["result"] == {} and "no metadata table" in r["message"]
    path = tmp_path / "v9"
    t = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts",
                         options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true"})
    last = ""
    for n in range(3):
        last = t.write(pa.table({"id": [f"k{n}"], "ts": [n]}))
    r = run_json(capsys, "metadata", path)["result"]
    files = [p.name for p in path.iterdir() if p.suffix == ".parquet" or ".log." in p.name]
    assert r["partitions"] == r["maintained by hudi_ds"] == ["files"]
    assert r["files listed"] == len(files) and r["data partitions listed"] == 1
    assert r["synced to"] == last and r["delta commits since"] == 3 and r["pending instants"] == []
    rc, out, _ = run(capsys, "metadata", path)
    assert rc == 0 and "synced to" in out


def test_validate_names_each_instant_the_metadata_table_lost_and_metadata_drop_repairs_it(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """A version 9 table gets a metadata table by default; a deltacommit of it lost (its completed instant file
    deleted) is named by instant and by file; `metadata drop` drops it and the next write builds it afresh."""
    path = tmp_path / "v9"
    t = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", table_type="MERGE_ON_READ",
                         options={"hoodie.write.table.version": "9"})
    for n in range(3):
        t.write(pa.table({"id": [f"k{n}"], "ts": [n]}))
    checks = {c["name"]: c for c in run_json(capsys, "validate", path)["checks"]}
    assert checks["metadata table in step with the timeline"]["status"] == "ok"
    lost = t.timeline()[-1].requested_time
    mdt_timeline = path / ".hoodie" / "metadata" / ".hoodie" / "timeline"
    [completed] = [p for p in mdt_timeline.iterdir() if p.name.startswith(f"{lost}_")]
    completed.unlink()
    r = run_json(capsys, "validate", path, expect=1)
    written = next(p.name for p in path.iterdir() if lost in p.name)
    assert any(f"data instant {lost} (deltacommit) completed" in e and "inflight" in e for e in r["errors"])
    assert any(written in e and "does not list it" in e for e in r["errors"])
    assert run_json(capsys, "metadata", "drop", path)["result"] == {"dropped": True}
    assert run_json(capsys, "metadata", path)["result"] == {}
    assert not (path / ".hoodie" / "metadata").exists()
    assert run_json(capsys, "metadata", "drop", path)["result"] == {"dropped": False}
    assert run_json(capsys, "validate", path)["ok"]
    HudiTable(str(path)).write(pa.table({"id": ["k9"], "ts": [9]}))
    assert run_json(capsys, "metadata", path)["result"]["files listed"] == 4
    assert run_json(capsys, "validate", path)["ok"]
    rc, _, err = run(capsys, "metadata", "nope", path)
    assert rc == 2 and "metadata drop PATH" in err
