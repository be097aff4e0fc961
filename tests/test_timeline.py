"""Timeline: instant names and times, commit metadata, Avro instant files, and real tables written by Hudi."""

from __future__ import annotations

import io
import json
import os
import re
import threading
from datetime import datetime, timedelta, timezone
from pathlib import Path
from typing import Any

import fastavro
import pytest
from hypothesis import given
from hypothesis import strategies as st

from hudi_ds.errors import CommitConflictError, CorruptTableError, InstantNotFoundError
from hudi_ds.storage import open_storage
from hudi_ds.timeline import (
    COMMIT_ACTIONS,
    Action,
    CommitMetadata,
    Instant,
    State,
    Timeline,
    TimelineWriter,
    WriteStat,
    datetime_to_instant,
    instant_to_datetime,
    new_instant_time,
    parse_instant_file_name,
)
from hudi_ds.timeline import avro_models as am
from hudi_ds.timeline.avro_schemas import ALL_SCHEMAS
from hudi_ds.timeline.commit_metadata import jackson_pretty
from hudi_ds.timeline.instant import COMPLETED_ACTION_OF

# --- reference tables ---------------------------------------------------------------------------------------


def _reference_root() -> Path | None:
    candidates = [os.environ.get("HUDI_DS_REFERENCE_TABLES"),
                  str(Path(__file__).resolve().parents[2] / "shared" / "reference-tables"),
                  "/work/shared/reference-tables"]
    for c in candidates:
        if c and Path(c, "CATALOG.md").is_file():
            return Path(c)
    return None


REF = _reference_root()


@pytest.fixture(scope="module")
def ref() -> Path:
    if REF is None:
        if os.environ.get("CI") == "true":
            pytest.fail("reference tables (shared/reference-tables) are missing on CI")
        pytest.skip("reference tables (shared/reference-tables) not found")
    return REF


def _tables(root: Path) -> list[Path]:
    return sorted(p for p in root.iterdir() if (p / ".hoodie" / "hoodie.properties").is_file())


def _props(table: Path) -> dict[str, str]:
    out = {}
    for line in (table / ".hoodie" / "hoodie.properties").read_text("latin-1").splitlines():
        if line and not line.startswith(("#", "!")) and "=" in line:
            k, v = line.split("=", 1)
            out[k.strip()] = v.strip()
    return out


def _load(table: Path) -> Timeline:
    props = _props(table)
    layout = int(props.get("hoodie.timeline.layout.version", "1"))
    return Timeline.load(open_storage(str(table)), layout, props.get("hoodie.timeline.path"))


def _catalog_completed(root: Path) -> dict[str, list[tuple[str, str | None, str]]]:
    """table -> [(requested, completion, action)] from CATALOG.md's 'completed:' lines."""
    out: dict[str, list[tuple[str, str | None, str]]] = {}
    table = None
    for line in (root / "CATALOG.md").read_text().splitlines():
        if line.startswith("### "):
            table = line[4:].strip()
        elif table and "; completed:" in line:
            entries = [e.strip() for e in line.split("; completed:", 1)[1].split(",") if e.strip()]
            rows = []
            for e in entries:
                times, action = e.split(" ", 1)
                req, _, done = times.partition("→")
                rows.append((req, done or None, action))
            out[table] = rows
    return out


# (requested, completion, action) hardcoded from CATALOG.md for representative tables
EXPECTED_COMMITS = {
    "quickstart_mor_avro_v6_trips_8i3d": [
        ("20250618054711154", None, "deltacommit"), ("20250618054714114", None, "deltacommit")],
    "cow_v6_simplekeygen_nonhivestyle_overwritetable": [
        ("20240707001301554", None, "commit"), ("20240707001302376", None, "commit"),
        ("20240707001303088", None, "replacecommit")],
    "quickstart_mor_avro_v8_trips_8i3u1d": [
        ("20251220210108078", "20251220210109593", "deltacommit"),
        ("20251220210123755", "20251220210124336", "deltacommit"),
        ("20251220210125441", "20251220210126002", "deltacommit"),
        ("20251220210127080", "20251220210127601", "deltacommit"),
        ("20251220210128625", "20251220210129197", "deltacommit"),
        ("20251220210129235", "20251220210129883", "commit"),  # planned as compaction
        ("20251220210130911", "20251220210131755", "deltacommit")],
    "cow_v9_txns_simple_meta": [
        ("20260307162434124", "20260307162438653", "commit"),
        ("20260307162440672", "20260307162441724", "commit"),
        ("20260307162442820", "20260307162443659", "commit"),
        ("20260307162444563", "20260307162445429", "commit"),
        ("20260307162446287", "20260307162447103", "commit"),
        ("20260307162447985", "20260307162448800", "commit"),
        ("20260307162449244", "20260307162450494", "commit"),
        ("20260307162450901", "20260307162451860", "replacecommit"),
        ("20260307162452329", "20260307162453090", "commit"),
        ("20260307162453568", "20260307162454325", "commit"),
        ("20260307162454799", "20260307162456102", "replacecommit"),  # planned as clustering
        ("20260307162456179", "20260307162456976", "commit")],
}


def test_reference_commits_match_catalog(ref: Path) -> None:
    for name, expected in EXPECTED_COMMITS.items():
        tl = _load(ref / name)
        assert [(i.requested_time, i.completion_time, i.action) for i in tl.commits()] == expected, name
        assert all(i.is_completed for i in tl.commits())
        assert tl.pending() == []


def test_every_reference_timeline_matches_catalog(ref: Path) -> None:
    catalog = _catalog_completed(ref)
    tables = _tables(ref)
    assert len(tables) >= 20 and set(catalog) >= {t.name for t in tables}
    for table in tables:
        tl = _load(table)
        got = [(i.requested_time, i.completion_time, i.action) for i in tl.completed()]
        want = [(r, c, re.sub(r"\(planned as (\w+)\)", "", a)) for r, c, a in catalog[table.name]]
        assert got == want, table.name
        for inst, (_, _, raw_action) in zip(tl.completed(), catalog[table.name], strict=True):
            planned = re.search(r"planned as (\w+)", raw_action)
            if planned:  # the requested file keeps the pending action's own name
                assert tl.file_path(inst, State.REQUESTED).endswith(f".{planned.group(1)}.requested")


def test_layout2_commits_ordered_by_completion_time(ref: Path) -> None:
    for table in _tables(ref):
        tl = _load(table)
        if tl.layout == 2:
            done = [i.completion_time or "" for i in tl.commits()]
            assert done == sorted(done), table.name
            for inst in tl.completed():
                assert tl.completion_time_of(inst.requested_time) == inst.completion_time
        else:
            assert [i.requested_time for i in tl.commits()] == sorted(i.requested_time for i in tl.commits())


def test_reference_commit_metadata_and_avro_files(ref: Path) -> None:
    avro_names = set()
    for table in _tables(ref):
        tl = _load(table)
        for inst in tl.completed():
            if inst.action in COMMIT_ACTIONS:
                md = tl.commit_metadata(inst)
                assert md.write_stats(), (table.name, inst)
                assert md.schema_json and json.loads(md.schema_json)["type"] == "record"
                for partition, file_id, rel in md.written_files():
                    assert file_id and rel.startswith(partition)
        for inst in tl.instants:
            for state in (State.REQUESTED, State.INFLIGHT, State.COMPLETED):
                if state.rank > inst.state.rank:
                    continue
                data = tl.read_content(inst, state)
                if data.startswith(am.AVRO_MAGIC):
                    rec = tl.read_avro(inst, state)
                    writer_schema = fastavro.reader(io.BytesIO(data)).writer_schema
                    assert isinstance(writer_schema, dict)
                    avro_names.add(writer_schema["name"])
                    assert isinstance(rec, dict)
                elif data and inst.action in COMMIT_ACTIONS | {"compaction", "clustering"}:
                    tl.commit_metadata(inst, state)
    assert {"HoodieRequestedReplaceMetadata", "HoodieCompactionPlan", "HoodieCommitMetadata",
            "HoodieReplaceCommitMetadata"} <= {n.rsplit(".", 1)[-1] for n in avro_names}


def test_reference_v6_json_round_trips_byte_for_byte(ref: Path) -> None:
    checked = 0
    for table in _tables(ref):
        tl = _load(table)
        if tl.layout != 1:
            continue
        for inst in tl.instants:
            for state in (State.INFLIGHT, State.COMPLETED):
                if state.rank > inst.state.rank:
                    continue
                raw = tl.read_content(inst, state)
                if raw and not raw.startswith(am.AVRO_MAGIC):
                    assert tl.commit_metadata(inst, state).to_json_bytes() == raw, tl.file_path(inst, state)
                    checked += 1
    assert checked >= 40


def test_reference_replace_commit_file_ids(ref: Path) -> None:
    tl = _load(ref / "cow_v6_simplekeygen_nonhivestyle_overwritetable")
    md = tl.commit_metadata(tl.get("20240707001303088"))
    assert md.operation_type == "INSERT_OVERWRITE_TABLE"
    assert md.replaced_file_ids() == {"30": ["d398fae1-c0e6-4098-8124-f55f7098bdba-0"],
                                      "20": ["88163884-fef0-4aab-865d-c72327a8a1d5-0"],
                                      "10": ["4f2685a3-614f-49ca-9b2b-e1cb9fb61f27-0"]}
    tl9 = _load(ref / "cow_v9_txns_simple_meta")
    md9 = tl9.commit_metadata(tl9.get("20260307162450901"))
    assert md9.operation_type == "INSERT_OVERWRITE"
    assert md9.replaced_file_ids() == {"region=eu": ["68aaee55-008d-4f10-a3a4-83dcb5910069-0",
                                                     "2578f9c2-93be-4911-bb29-cda3106b5623-0"]}
    plain = tl9.commit_metadata(tl9.get("20260307162434124"))
    assert plain.partition_to_replace_file_ids is None


def test_reference_v8_log_stats(ref: Path) -> None:
    tl = _load(ref / "quickstart_mor_avro_v8_trips_8i3u1d")
    stat = tl.commit_metadata(tl.get("20251220210123755")).write_stats()[0]
    assert stat.is_log and stat.log_version == 1 and stat.base_file == ""
    assert stat.log_files == [".036ded81-9ed4-479f-bcea-7145dfa0079b-0_20251220210123755.log.1_0-1022-2928"]
    compaction = tl.commit_metadata(tl.get("20251220210129235"))
    assert compaction.compacted and compaction.operation_type == "COMPACT"
    plan = tl.read_avro(tl.get("20251220210129235"), State.REQUESTED)
    assert plan["version"] == 2 and len(plan["operations"]) == 3


def test_our_schemas_match_what_java_embeds(ref: Path) -> None:
    """Our schemas print exactly as the compiled Java classes embed them; re-encoding gives the same bytes."""
    files = {
        "HoodieRequestedReplaceMetadata":
            "cow_v6_simplekeygen_nonhivestyle_overwritetable/.hoodie/20240707001303088.replacecommit.requested",
        "HoodieCompactionPlan":
            "quickstart_mor_avro_v8_trips_8i3u1d/.hoodie/timeline/20251220210129235.compaction.requested",
        "HoodieCommitMetadata":
            "quickstart_mor_avro_v8_trips_8i3u1d/.hoodie/timeline/20251220210123755_20251220210124336.deltacommit",
        "HoodieReplaceCommitMetadata":
            "cow_v9_txns_simple_meta/.hoodie/timeline/20260307162450901_20260307162451860.replacecommit",
    }
    for name, rel in files.items():
        raw = (ref / rel).read_bytes()
        reader = fastavro.reader(io.BytesIO(raw))
        record = next(iter(reader))
        assert am.java_schema_json(ALL_SCHEMAS[name]) == reader.metadata["avro.schema"], name
        assert am.encode_avro_instant(record, ALL_SCHEMAS[name], sync_marker=raw[-16:]) == raw, name  # type: ignore[arg-type]
    # what Spark 0.14/0.15 writes for insert_overwrite is the all-null builder output
    raw = (ref / files["HoodieRequestedReplaceMetadata"]).read_bytes()
    assert am.encode_avro_instant(am.requested_replace_metadata(), am.REQUESTED_REPLACE_METADATA,
                                  sync_marker=raw[-16:]) == raw


# --- commit metadata ----------------------------------------------------------------------------------------

# Key sets of a real v6 (Spark 0.15) deltacommit: a base-file stat and a log-file stat.
REAL_BASE_STAT_KEYS = [
    "fileId", "path", "cdcStats", "prevCommit", "numWrites", "numDeletes", "numUpdateWrites", "numInserts",
    "totalWriteBytes", "totalWriteErrors", "tempPath", "partitionPath", "totalLogRecords",
    "totalLogFilesCompacted", "totalLogSizeCompacted", "totalUpdatedRecordsCompacted", "totalLogBlocks",
    "totalCorruptLogBlock", "totalRollbackBlocks", "fileSizeInBytes", "minEventTime", "maxEventTime",
    "runtimeStats"]
REAL_LOG_STAT_KEYS = REAL_BASE_STAT_KEYS + ["logVersion", "logOffset", "baseFile", "logFiles", "recordsStats"]


def _sample_metadata() -> CommitMetadata:
    base = WriteStat(file_id="f1-0", path="city=sf/f1-0_0-1-0_20250101000000000.parquet", num_writes=4,
                     num_inserts=4, total_write_bytes=1000, partition_path="city=sf", file_size_in_bytes=1000,
                     runtime_stats={"totalScanTime": 0, "totalUpsertTime": 0, "totalCreateTime": 5})
    log = WriteStat(file_id="f2-0", path="city=sf/.f2-0_20250101000000000.log.1_0-1-0",
                    prev_commit="20250101000000000", num_writes=1, num_update_writes=1, total_write_bytes=90,
                    partition_path="city=sf", file_size_in_bytes=90, is_log=True, log_version=1,
                    base_file="f2-0_0-1-0_20250101000000000.parquet",
                    log_files=[".f2-0_20250101000000000.log.1_0-1-0"])
    return CommitMetadata({"city=sf": [base, log]}, extra_metadata={"schema": '{"type":"record"}'},
                          operation_type="UPSERT")


def test_deltacommit_json_has_real_key_sets() -> None:
    doc = json.loads(_sample_metadata().to_json_bytes())
    assert list(doc) == ["partitionToWriteStats", "compacted", "extraMetadata", "operationType"]
    base, log = doc["partitionToWriteStats"]["city=sf"]
    assert list(base) == REAL_BASE_STAT_KEYS
    assert list(log) == REAL_LOG_STAT_KEYS
    assert base["prevCommit"] == "null" and log["recordsStats"] == {"val": None}
    if REF is not None:  # and those are the real files' key sets
        real_file = REF / "mor_parquet_v6_nonpartitioned/.hoodie/20250117083136333.deltacommit"
        real = json.loads(real_file.read_text())
        real_keys = sorted(list(s) for s in real["partitionToWriteStats"][""])
        assert real_keys == sorted([REAL_BASE_STAT_KEYS, REAL_LOG_STAT_KEYS])


def test_commit_metadata_json_round_trip() -> None:
    md = _sample_metadata()
    data = md.to_json_bytes()
    assert data.startswith(b'{\n  "partitionToWriteStats" : {\n    "city=sf" : [ {\n      "fileId" : "f1-0",')
    back = CommitMetadata.from_json_bytes(data, "x.deltacommit")
    assert back == md
    assert back.to_json_bytes() == data
    assert back.schema_json == '{"type":"record"}'
    assert [p for _, _, p in back.written_files()] == [
        "city=sf/f1-0_0-1-0_20250101000000000.parquet", "city=sf/.f2-0_20250101000000000.log.1_0-1-0"]
    replace = CommitMetadata(operation_type="INSERT_OVERWRITE", partition_to_replace_file_ids={"p": ["a-0"]})
    doc = json.loads(replace.to_json_bytes())
    assert doc["partitionToReplaceFileIds"] == {"p": ["a-0"]}
    back = CommitMetadata.from_json_bytes(replace.to_json_bytes(), "r")
    assert back.partition_to_replace_file_ids == {"p": ["a-0"]}


def test_commit_metadata_empty_and_corrupt() -> None:
    assert CommitMetadata.from_json_bytes(b"", "a.commit") == CommitMetadata()
    with pytest.raises(CorruptTableError, match=r"\.hoodie/1\.commit"):
        CommitMetadata.from_json_bytes(b'{"partitionToWriteStats": {', ".hoodie/1.commit")
    with pytest.raises(CorruptTableError, match="2.commit"):
        CommitMetadata.from_json_bytes(b"[1, 2]", "2.commit")


def test_jackson_pretty_printer_shapes() -> None:
    assert jackson_pretty({}) == "{ }"
    assert jackson_pretty({"a": [], "b": ["x", "y"], "c": None}) == (
        '{\n  "a" : [ ],\n  "b" : [ "x", "y" ],\n  "c" : null\n}')
    assert jackson_pretty({"k": "é\n\"/"}) == '{\n  "k" : "é\\n\\"/"\n}'


_JSON_SCALARS = st.none() | st.booleans() | st.integers(-2**63, 2**63 - 1) | st.text()


@given(st.recursive(_JSON_SCALARS, lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.text(max_size=8), inner, max_size=4), max_leaves=20))
def test_jackson_pretty_printer_writes_json_of_the_value(value: Any) -> None:
    text = jackson_pretty(value)
    assert json.loads(text) == value


# --- Avro instant files -------------------------------------------------------------------------------------

def _samples() -> list[tuple[dict[str, Any], dict[str, Any]]]:
    rb_plan = am.rollback_plan("20250101000000000", "deltacommit", [
        am.rollback_request("p", "f-0", "20241231000000000",
                            ["file:/t/p/f-0_1-0-1_20250101000000000.parquet"],
                            {"file:/t/p/.f-0_20241231000000000.log.1_0-1-0": 120})])
    rb_meta = am.rollback_metadata("20250101000000001", [("20250101000000000", "deltacommit")], {
        "p": am.rollback_partition_metadata("p", ["file:/t/p/f-0_1-0-1_20250101000000000.parquet"],
                                            rollback_log_files={"file:/t/p/.f-0_2024.log.2_0-1-0": 80},
                                            log_files_from_failed_commit={})}, time_taken_ms=12)
    comp = am.compaction_plan([am.compaction_operation("20241231000000000", "f-0", "p",
                                                       "f-0_0-1-0_20241231000000000.parquet",
                                                       [".f-0_20241231000000000.log.1_0-1-0"],
                                                       {"TOTAL_LOG_FILES": 1})])
    cplan = am.clean_plan("KEEP_LATEST_COMMITS", {"p": ["file:/t/p/old.parquet"]},
                          ("20250101000000000", "commit", "COMPLETED"), "20250101000000000")
    cmeta = am.clean_metadata("20250102000000000", "20250101000000000", {
        "p": am.clean_partition_metadata("p", "KEEP_LATEST_COMMITS", ["old.parquet"], ["old.parquet"])})
    return [(rb_plan, am.ROLLBACK_PLAN), (rb_meta, am.ROLLBACK_METADATA), (comp, am.COMPACTION_PLAN),
            (cplan, am.CLEANER_PLAN), (cmeta, am.CLEAN_METADATA),
            (am.requested_replace_metadata("INSERT_OVERWRITE"), am.REQUESTED_REPLACE_METADATA)]


@pytest.mark.parametrize("idx", range(6))
def test_avro_encode_decode_round_trip(idx: int) -> None:
    record, schema = _samples()[idx]
    data = am.encode_avro_instant(record, schema)
    assert am.decode_avro_instant(data, "x") == record
    reader = fastavro.reader(io.BytesIO(data))  # a standard OCF any Avro library reads
    assert list(reader) == [record]
    assert set(reader.metadata) == {"avro.schema"}  # like Java: no avro.codec key, null codec
    assert json.loads(reader.metadata["avro.schema"])["name"] == schema["name"]
    assert am.decode_avro_instant(data, "x", reader_schema=schema) == record


def test_rollback_and_clean_totals() -> None:
    (_, _), (rb_meta, _), _, _, (cmeta, _), _ = _samples()
    assert rb_meta["totalFilesDeleted"] == 1 and rb_meta["commitsRollback"] == ["20250101000000000"]
    assert rb_meta["instantsRollback"] == [{"commitTime": "20250101000000000", "action": "deltacommit"}]
    assert cmeta["totalFilesDeleted"] == 1 and cmeta["version"] == 2


def test_decode_bad_avro_names_the_file() -> None:
    data = am.encode_avro_instant(*_samples()[0])
    for bad in (b"", b"not avro", data[: len(data) // 2]):
        with pytest.raises(CorruptTableError, match=r"\.hoodie/7\.rollback"):
            am.decode_avro_instant(bad, ".hoodie/7.rollback")


# --- instant times ------------------------------------------------------------------------------------------

def test_new_instant_time_frozen_clock() -> None:
    now = datetime(2025, 6, 18, 5, 47, 11, 154000, tzinfo=timezone.utc)
    first = new_instant_time(now=now)
    assert first == "20250618054711154"
    times = [first]
    for _ in range(5):
        times.append(new_instant_time(after=times[-1], now=now))
    assert times == sorted(set(times)) and times[-1] == "20250618054711159"
    assert new_instant_time(after="20250618054711100", now=now) == first  # clock ahead: use the clock


def test_new_instant_time_rollover_and_legacy() -> None:
    now = datetime(2020, 1, 1, tzinfo=timezone.utc)
    assert new_instant_time(after="20241231235959999", now=now) == "20250101000000000"
    assert new_instant_time(after="20240229235959999", now=now) == "20240301000000000"
    assert new_instant_time(after="20241231235959", now=now) == "20241231235959001"
    assert new_instant_time(after="00000000000000", now=now) == "20200101000000000"
    local = datetime(2025, 1, 1, 8, 0, tzinfo=timezone(timedelta(hours=8)))
    assert new_instant_time(now=local) == "20250101000000000"


def test_instant_time_conversions() -> None:
    dt = datetime(2024, 4, 18, 17, 32, 13, 674000, tzinfo=timezone.utc)
    assert instant_to_datetime("20240418173213674") == dt
    assert instant_to_datetime("20240418173213") == dt.replace(microsecond=0)
    assert datetime_to_instant(dt) == "20240418173213674"
    assert datetime_to_instant("2024-04-18 17:32:13.674") == "20240418173213674"
    assert datetime_to_instant("2024-04-18 17:32:13") == "20240418173213000"
    assert datetime_to_instant("2024-04-18T19:32:13.674+02:00") == "20240418173213674"
    assert datetime_to_instant("2024-04-18T17:32:13Z") == "20240418173213000"
    assert datetime_to_instant("2024-04-18") == "20240418000000000"
    assert datetime_to_instant("20240418173213") == "20240418173213000"
    assert datetime_to_instant("0") == "00000000000000000"
    for bad in ("2024041817", "yesterday", "2024-13-01 00:00:00"):
        with pytest.raises(ValueError):
            datetime_to_instant(bad)


# --- file names ---------------------------------------------------------------------------------------------

_ts = st.datetimes(min_value=datetime(1971, 1, 1), max_value=datetime(2999, 12, 31)).map(datetime_to_instant)
_actions = st.sampled_from([a.value for a in Action])
_states = st.sampled_from(list(State))


@given(_ts, _ts, _actions, _states, st.sampled_from([1, 2]))
def test_file_name_round_trip(req: str, done: str, action: str, state: State, layout: int) -> None:
    completion = done if (layout == 2 and state is State.COMPLETED) else None
    inst = Instant(req, action, state, completion)
    name = inst.file_name(layout)
    parsed = parse_instant_file_name(name, layout)
    assert parsed is not None
    assert parsed.file_name(layout) == name  # names are stable
    if state is State.COMPLETED:
        assert parsed == Instant(req, COMPLETED_ACTION_OF.get(action, action), state, completion)
    elif layout == 1 and action == "clustering":
        assert parsed == Instant(req, "replacecommit", state)
    else:
        assert parsed == inst
    short = req[:14]
    assert parse_instant_file_name(inst.file_name(layout).replace(req, short, 1), layout) is not None


def test_file_name_rules() -> None:
    assert Instant("20240101000000000", "commit", State.INFLIGHT).file_name(1) == "20240101000000000.inflight"
    assert Instant("20240101000000000", "commit", State.INFLIGHT).file_name(2) == "20240101000000000.inflight"
    done = Instant("1" * 17, "deltacommit", State.COMPLETED, "2" * 17)
    assert done.file_name(2) == f"{'1' * 17}_{'2' * 17}.deltacommit"
    assert Instant("1" * 17, "compaction", State.REQUESTED).file_name(1) == f"{'1' * 17}.compaction.requested"
    assert Instant("1" * 17, "compaction", State.COMPLETED).file_name(1) == f"{'1' * 17}.commit"
    assert Instant("1" * 17, "clustering", State.INFLIGHT).file_name(2) == f"{'1' * 17}.clustering.inflight"
    with pytest.raises(ValueError):
        Instant("1" * 17, "commit", State.COMPLETED).file_name(2)
    legacy = Instant("20240101000000", "commit", State.INFLIGHT)
    assert parse_instant_file_name("20240101000000.inflight", 1) == legacy
    for junk in ("hoodie.properties", "archived", ".aux", ".temp", "20240101000000000.commit.crc",
                 ".20240101000000000.commit.crc", ".20240101000000000.commit.abc.tmp", "2024.commit",
                 "20240101000000000_20240101000000001.commit.requested", "20240101000000000.requested",
                 "hoodie.properties.backup", "metadata"):
        assert parse_instant_file_name(junk, 1) is None, junk
        assert parse_instant_file_name(junk, 2) is None, junk
    assert parse_instant_file_name("20240101000000000_20240101000000001.commit", 1) is None


def test_instant_ordering() -> None:
    a = Instant("20240103153000", "commit", State.COMPLETED)
    b = Instant("20240103153000001", "commit", State.REQUESTED)
    c = Instant("20240103153000001", "commit", State.COMPLETED)
    assert sorted([c, b, a]) == [a, b, c]
    assert State.REQUESTED < State.INFLIGHT < State.COMPLETED


# --- writing and loading a v6 timeline ----------------------------------------------------------------------

def test_writer_lifecycle_and_timeline(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    storage.write_bytes(".hoodie/hoodie.properties", b"hoodie.table.name=t\n")
    storage.makedirs(".hoodie/archived")
    w = TimelineWriter(storage)
    t1, t2, t3 = "20250101000000000", "20250101000000001", "20250101000000002"
    md = _sample_metadata()
    assert w.create_requested(t1, "deltacommit")
    w.transition_to_inflight(t1, "deltacommit", CommitMetadata(operation_type="UPSERT").to_json_bytes())
    w.complete(t1, "deltacommit", md.to_json_bytes())
    assert w.create_requested(t2, "commit")
    w.transition_to_inflight(t2, "commit", b"{}")
    assert (tmp_path / ".hoodie" / f"{t2}.inflight").is_file()
    tl = Timeline.load(storage, 1)
    assert [(i.requested_time, i.action, i.state) for i in tl.instants] == [
        (t1, "deltacommit", State.COMPLETED), (t2, "commit", State.INFLIGHT)]
    assert tl.commits() == [tl.get(t1)] and tl.last_completed_commit() == tl.get(t1)
    assert [i.requested_time for i in tl.commits(include_pending=True)] == [t1, t2]
    assert tl.commit_metadata(tl.get(t1)) == md
    assert tl.contains_completed(t1) and not tl.contains_completed(t2)
    assert tl.contains_or_before_start("20240101000000000") and not tl.contains_or_before_start(t2)
    assert tl.last_instant_time() == t2 and tl.find(t3) is None and not tl.has_archived_instants()
    with pytest.raises(InstantNotFoundError):
        tl.get(t3)
    with pytest.raises(CorruptTableError, match=f"{t2}.commit"):
        tl.read_content(tl.get(t2), State.COMPLETED)
    w.delete_instant_files(t2, "commit")
    assert [i.requested_time for i in Timeline.load(storage, 1).instants] == [t1]
    # a rollback recorded as one Avro instant
    (plan, plan_schema), (meta, meta_schema) = _samples()[:2]
    w.write_avro_completed(t3, "rollback", plan, meta)
    tl = Timeline.load(storage, 1)
    rb = tl.get(t3)
    assert rb.action == "rollback" and rb.is_completed and rb not in tl.commits()
    assert tl.read_avro(rb, State.REQUESTED) == plan and tl.read_avro(rb) == meta
    assert tl.read_content(rb, State.INFLIGHT) == b""
    storage.write_bytes(".hoodie/archived/.commits_.archive.1_1-0-1", b"x")
    assert Timeline.load(storage, 1).has_archived_instants()


def test_writer_clean_instant(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    w = TimelineWriter(storage)
    (plan, _), (meta, _) = _samples()[3:5]
    w.write_avro_completed("20250102000000000", "clean", plan, meta)
    tl = Timeline.load(storage, 1)
    inst = tl.get("20250102000000000")
    assert tl.read_avro(inst, State.INFLIGHT) == plan and tl.read_avro(inst) == meta
    with pytest.raises(CommitConflictError):
        w.write_avro_completed("20250102000000000", "clean", plan, meta)
    with pytest.raises(ValueError):
        w.write_avro_completed("20250103000000000", "compaction", plan, meta)


def test_requested_race_has_one_winner(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    for round_ in range(20):
        ts = f"202501010000{round_:05d}"
        barrier = threading.Barrier(2)
        results: list[bool] = []

        def claim(action: str, ts: str = ts, barrier: threading.Barrier = barrier,
                  results: list[bool] = results) -> None:
            w = TimelineWriter(open_storage(str(tmp_path)))
            barrier.wait()
            results.append(w.create_requested(ts, action))

        threads = [threading.Thread(target=claim, args=("deltacommit",)) for _ in range(2)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert sorted(results) == [False, True]
    # different actions at one time: never both
    w = TimelineWriter(storage)
    assert w.create_requested("20250202000000000", "deltacommit")
    assert not w.create_requested("20250202000000000", "commit")
    assert not (tmp_path / ".hoodie" / "20250202000000000.commit.requested").exists()


def test_complete_refuses_to_overwrite(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    w = TimelineWriter(storage)
    ts = "20250101000000000"
    with pytest.raises(InstantNotFoundError):
        w.transition_to_inflight(ts, "deltacommit", b"")
    assert w.create_requested(ts, "deltacommit")
    with pytest.raises(InstantNotFoundError):
        w.complete(ts, "deltacommit", b"{}")
    w.transition_to_inflight(ts, "deltacommit", b"{}")
    with pytest.raises(CommitConflictError):
        w.transition_to_inflight(ts, "deltacommit", b"{}")
    w.complete(ts, "deltacommit", b"first")
    with pytest.raises(CommitConflictError):
        w.complete(ts, "deltacommit", b"second")
    assert (tmp_path / ".hoodie" / f"{ts}.deltacommit").read_bytes() == b"first"


def test_layout_2_completes_once_with_a_completion_time_after_every_time(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    w = TimelineWriter(storage, layout=2, folder=".hoodie/timeline")
    first, second = "20250101000000000", "20250101000000005"
    for ts in (first, second):
        assert w.create_requested(ts, "deltacommit")
        w.transition_to_inflight(ts, "deltacommit", b"{}")
    done_second = w.complete(second, "deltacommit", b"second")
    done_first = w.complete(first, "deltacommit", b"first")  # completes later: a later completion time
    assert done_second is not None and done_first is not None and second < done_second < done_first
    with pytest.raises(CommitConflictError):
        w.complete(first, "deltacommit", b"again")
    names = sorted(p.name for p in (tmp_path / ".hoodie" / "timeline").iterdir())
    assert f"{first}_{done_first}.deltacommit" in names and f"{second}_{done_second}.deltacommit" in names
    w.delete_instant_files(first, "deltacommit")
    assert not [n for n in (p.name for p in (tmp_path / ".hoodie" / "timeline").iterdir()) if n.startswith(first)]


def test_garbled_commit_names_the_file(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    w = TimelineWriter(storage)
    ts = "20250101000000000"
    w.create_requested(ts, "deltacommit")
    w.transition_to_inflight(ts, "deltacommit", b"")
    w.complete(ts, "deltacommit", b'{"partitionToWriteStats" : { "p" : [ {')
    tl = Timeline.load(storage, 1)
    with pytest.raises(CorruptTableError, match=rf"\.hoodie/{ts}\.deltacommit"):
        tl.commit_metadata(tl.get(ts))
    assert tl.commit_metadata(tl.get(ts), State.INFLIGHT) == CommitMetadata()  # 0 bytes: empty metadata
    storage.write_bytes(f".hoodie/{ts}.deltacommit", b"Obj\x01garbage")
    with pytest.raises(CorruptTableError, match=rf"{ts}\.deltacommit"):
        Timeline.load(storage, 1).commit_metadata(tl.get(ts))


def test_layout2_custom_timeline_path(tmp_path: Path) -> None:
    storage = open_storage(str(tmp_path))
    rec = am.encode_avro_instant({"partitionToWriteStats": {}, "compacted": False, "extraMetadata": {},
                                  "version": 1, "operationType": "INSERT"}, am.COMMIT_METADATA)
    storage.write_bytes(".hoodie/tl/20250101000000000.commit.requested", b"")
    storage.write_bytes(".hoodie/tl/20250101000000000.inflight", b"")
    storage.write_bytes(".hoodie/tl/20250101000000000_20250101000000900.commit", rec)
    storage.write_bytes(".hoodie/tl/20250101000000100.deltacommit.requested", b"")
    storage.write_bytes(".hoodie/tl/20250101000000100_20250101000000500.deltacommit", rec)
    storage.write_bytes(".hoodie/tl/history/20240101_20240102_0.parquet", b"x")
    tl = Timeline.load(storage, 2, "tl")
    assert [i.requested_time for i in tl.commits()] == ["20250101000000100", "20250101000000000"]
    assert tl.completion_time_of("20250101000000000") == "20250101000000900"
    assert tl.commit_metadata(tl.get("20250101000000000")).operation_type == "INSERT"
    assert tl.has_archived_instants()
    assert Timeline.load(storage, 2, ".hoodie/tl").instants == tl.instants
    assert Timeline.load(storage, 2).instants == []


def test_completed_metadata_is_shared_until_the_file_changes(tmp_path: Path) -> None:
    """Timelines share parsed metadata of completed instants; a file re-created at the same path is read again."""
    storage = open_storage(str(tmp_path))
    writer = TimelineWriter(storage)
    first = CommitMetadata(operation_type="UPSERT", extra_metadata={"n": "1"})
    writer.create_requested("20250101000000000", "deltacommit")
    writer.transition_to_inflight("20250101000000000", "deltacommit")
    writer.complete("20250101000000000", "deltacommit", first.to_json_bytes())

    def loaded() -> CommitMetadata:
        timeline = Timeline.load(storage, 1)
        return timeline.commit_metadata(timeline.commits()[0])

    assert loaded().extra_metadata == {"n": "1"}
    assert loaded() is loaded()  # parsed once, shared by later loads
    path = tmp_path / ".hoodie" / "20250101000000000.deltacommit"
    second = CommitMetadata(operation_type="UPSERT", extra_metadata={"n": "22"})
    path.write_bytes(second.to_json_bytes())
    os.utime(path, ns=(path.stat().st_mtime_ns + 10**9, path.stat().st_mtime_ns + 10**9))
    assert loaded().extra_metadata == {"n": "22"}
