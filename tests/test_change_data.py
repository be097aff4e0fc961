"""Change data written at commit time (hoodie.table.cdc.enabled): the same feed as read-time inference, in every
supplemental logging mode, on both table types; files that follow their commit and their slice."""

from __future__ import annotations

import json
import random
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import CorruptTableError, HudiTable, TableExistsError
from hudi_ds.cli.validate import validate
from hudi_ds.log import cdc_block
from hudi_ds.log.format import BlockType, read_blocks

SCHEMA = pa.schema([("id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])
MODES = ["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]
ORDER = [("_hoodie_partition_path", "ascending"), ("_hoodie_record_key", "ascending"), ("_change_type", "ascending")]


def make(path: Path, table_type: str, cdc: bool, mode: str = "DATA_BEFORE_AFTER", **options: object) -> HudiTable:
    opts = {"hoodie.table.cdc.enabled": cdc, "hoodie.table.cdc.supplemental.logging.mode": mode, **options}
    return HudiTable.create(str(path), table_name="c", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type=table_type, buckets=2, options=opts)


def feed(t: HudiTable, start: str, end: str | None, index: dict[str, int]) -> list[tuple]:
    """The change rows of (start, end], commit times replaced by the commit's position in the history."""
    got = t.changes(start, end).sort_by(ORDER).to_pylist()
    return sorted((index[r.pop("_commit_time")], *r.values()) for r in got)


def cdc_files(path: str | Path) -> list[Path]:
    return sorted(p for p in Path(path).rglob(".*-cdc"))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]),
       mode=st.sampled_from(MODES))
def test_feed_with_change_data_equals_the_inferred_feed(tmp_path_factory, seed, table_type, mode):
    """Random histories of upserts, inserts, deletes, overwrites and compactions, written once with change data
    and once without: every commit range gives the same feed."""
    rng = random.Random(seed)
    base = tmp_path_factory.mktemp("cdc")
    # compactions between writes; no cleaning keeps every slice (a cleaned commit's changes are gone either way)
    services = {"compaction.delta_commits": rng.choice([1, 2, 100]), "hoodie.clean.automatic": False}
    on = make(base / "on", table_type, True, mode, **services)
    off = make(base / "off", table_type, False, **services)
    history = []
    for step in range(rng.randint(1, 7)):
        batch = [{"id": f"k{rng.randrange(12)}", "dt": rng.choice("xy"), "ts": rng.randrange(5), "v": step}
                 for _ in range(rng.randint(1, 10))]
        op = rng.choice(["upsert", "upsert", "upsert", "insert", "delete", "insert_overwrite"])
        history.append((pa.Table.from_pylist(batch, schema=SCHEMA), op))
    commits = {}
    for name, t in (("on", on), ("off", off)):
        commits[name] = [t.write(data, operation=op) for data, op in history]
    assert rows(on.to_arrow(), ["id", "dt", "ts", "v"]) == rows(off.to_arrow(), ["id", "dt", "ts", "v"])
    index = {ts: n for name in commits for n, ts in enumerate(commits[name])}
    points = ["0", *range(len(history))]
    for _ in range(6):
        a, b = sorted(rng.sample(points, 2), key=lambda p: -1 if p == "0" else p)
        ranges = {name: ("0" if a == "0" else commits[name][a], commits[name][b]) for name in commits}
        assert feed(on, *ranges["on"], index) == feed(off, *ranges["off"], index), (a, b)
    assert feed(on, "0", None, index) == feed(off, "0", None, index)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("mode", MODES)
def test_commits_list_their_change_data_files(tmp_path, table_type, mode):
    t = make(tmp_path / "t", table_type, True, mode)
    first = t.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "x", "ts": 1, "v": i} for i in range(6)],
                                         schema=SCHEMA))
    assert cdc_files(t.path) == []  # new file groups: inserts a reader infers from the files themselves
    second = t.write(pa.Table.from_pylist([{"id": "k1", "dt": "x", "ts": 2, "v": 10},
                                           {"id": "k9", "dt": "x", "ts": 2, "v": 9}], schema=SCHEMA))
    third = t.write(pa.table({"id": ["k2"], "dt": ["x"], "ts": [3]}), operation="delete")
    props = (Path(t.path) / ".hoodie" / "hoodie.properties").read_text()
    assert "hoodie.table.cdc.enabled=true" in props and f"hoodie.table.cdc.supplemental.logging.mode={mode}" in props
    listed = {}
    for inst in t.load_timeline().commits():
        for stat in t.load_timeline().commit_metadata(inst).write_stats():
            for rel in stat.cdc_paths():
                listed[rel] = inst.requested_time
    files = {str(p.relative_to(t.path)) for p in cdc_files(t.path)}
    assert set(listed) == files and set(listed.values()) <= {second, third} and second in listed.values()
    for rel, inst in listed.items():
        blocks = read_blocks((Path(t.path) / rel).read_bytes(), rel)
        assert [b.block_type for b in blocks] == [BlockType.CDC_DATA] and blocks[0].instant_time == inst
        records = cdc_block.decode_cdc_block(blocks[0], rel)
        expected = {"OP_KEY_ONLY": ["op", "record_key"], "DATA_BEFORE": ["op", "record_key", "before"],
                    "DATA_BEFORE_AFTER": ["op", "ts_ms", "before", "after"]}[mode]
        assert records.column_names == expected
        assert set(records["op"].to_pylist()) <= {"i", "u", "d"}
    kinds = sorted((r["_change_type"], r["id"]) for r in t.changes(first).to_pylist())
    assert kinds == [("delete", "k2"), ("insert", "k9"), ("update_postimage", "k1"), ("update_preimage", "k1")]
    # hudi-rs reads the snapshot with the change-data files beside the slices
    assert rows(hudi_rs(t.path), ["id", "ts", "v"]) == rows(t.to_arrow(), ["id", "ts", "v"])
    assert validate(t.path)["ok"], validate(t.path)["errors"]


def test_change_data_of_a_before_after_table_needs_no_data_file(tmp_path):
    """DATA_BEFORE_AFTER records hold both images: the feed of such a commit reads only its -cdc files."""
    t = make(tmp_path / "t", "MERGE_ON_READ", True)
    t.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "x", "ts": 1, "v": i} for i in range(4)], schema=SCHEMA))
    second = t.write(pa.Table.from_pylist([{"id": "k1", "dt": "x", "ts": 2, "v": 10}], schema=SCHEMA))
    expected = t.changes(t.timeline()[0].requested_time)
    for p in Path(t.path).rglob("*"):
        if p.is_file() and ".hoodie" not in p.parts and not p.name.endswith("-cdc") and "partition" not in p.name:
            p.write_bytes(b"")  # any read of a data file would now fail
    from hudi_ds.read.changes import commit_changes

    assert commit_changes(t.snapshot(), second).sort_by(ORDER).equals(expected.sort_by(ORDER))


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_failed_commit_leaves_no_change_data(tmp_path, table_type, monkeypatch):
    t = make(tmp_path / "t", table_type, True)
    t.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "x", "ts": 1, "v": i} for i in range(4)], schema=SCHEMA))
    before = t.changes("0")
    from hudi_ds.timeline import TimelineWriter

    complete = TimelineWriter.complete

    def crash(self: TimelineWriter, instant: str, action: str, *args: object) -> None:
        if action == "rollback":
            return complete(self, instant, action, *args)
        assert cdc_files(t.path), "the change data is written before the commit is published"
        raise RuntimeError("crash while publishing")

    monkeypatch.setattr(TimelineWriter, "complete", crash)
    with pytest.raises(RuntimeError):
        t.write(pa.Table.from_pylist([{"id": "k1", "dt": "x", "ts": 2, "v": 10}], schema=SCHEMA))
    monkeypatch.undo()
    assert cdc_files(t.path) == []
    assert t.changes("0").equals(before)


def test_rollback_and_clean_remove_change_data(tmp_path):
    t = make(tmp_path / "t", "COPY_ON_WRITE", True, **{"clean.retain_commits": 1})
    t.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "x", "ts": 1, "v": i} for i in range(4)], schema=SCHEMA))
    latest = t.write(pa.Table.from_pylist([{"id": "k1", "dt": "x", "ts": 2, "v": 10}], schema=SCHEMA))
    assert len(cdc_files(t.path)) == 1
    t.rollback(latest)
    assert cdc_files(t.path) == []
    for n in range(3):
        t.write(pa.Table.from_pylist([{"id": "k1", "dt": "x", "ts": 3 + n, "v": n}], schema=SCHEMA))
    t.clean(retain_commits=1)
    live = {p.name.split("_")[1].split(".")[0] for p in cdc_files(t.path)}
    slices = {p.name.rsplit("_", 1)[-1].split(".")[0] for p in Path(t.path).rglob("*.parquet")}
    assert live and live <= slices  # only the change data of slices still there


def test_validate_names_a_missing_change_data_file(tmp_path):
    t = make(tmp_path / "t", "MERGE_ON_READ", True)
    t.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "x", "ts": 1, "v": i} for i in range(4)], schema=SCHEMA))
    second = t.write(pa.Table.from_pylist([{"id": "k1", "dt": "x", "ts": 2, "v": 10}], schema=SCHEMA))
    (victim,) = cdc_files(t.path)
    victim.unlink()
    report = validate(t.path)
    assert not report["ok"] and any(victim.name in e and second in e for e in report["errors"]), report["errors"]
    with pytest.raises(CorruptTableError, match=victim.name.split("_")[0]):
        t.changes(t.timeline()[0].requested_time)


def test_change_data_is_fixed_when_the_table_is_created(tmp_path):
    t = make(tmp_path / "t", "MERGE_ON_READ", False)
    with pytest.raises(TableExistsError, match="hoodie.table.cdc.enabled"):
        make(tmp_path / "t", "MERGE_ON_READ", True)
    assert not t.config.cdc_enabled
    legacy = make(tmp_path / "legacy", "MERGE_ON_READ", True, "cdc_data_before")
    assert legacy.config.cdc_mode == "DATA_BEFORE"
    meta = json.loads(json.dumps(legacy.config.to_properties()))
    assert meta["hoodie.table.cdc.supplemental.logging.mode"] == "DATA_BEFORE"


@pytest.mark.parametrize("mode", MODES)
def test_change_data_across_schema_evolution(tmp_path, mode):
    """Change data written before a column was added and a type widened reads like the inferred feed: the new
    column null in older images, the widened type throughout."""
    feeds = []
    for cdc in (True, False):
        t = HudiTable.create(str(tmp_path / f"{cdc}"), table_name="e", record_key="id", ordering_field="ts",
                             buckets=1, options={"hoodie.table.cdc.enabled": cdc,
                                                 "hoodie.table.cdc.supplemental.logging.mode": mode})
        t.write(pa.table({"id": ["a", "b"], "ts": pa.array([1, 1], pa.int32()), "v": [1, 2]}))
        t.write(pa.table({"id": ["a"], "ts": pa.array([2], pa.int32()), "v": [10]}))
        t.write(pa.table({"id": ["a", "c"], "ts": pa.array([3, 3], pa.int64()), "v": [11, 3], "extra": ["x", "y"]}))
        t.write(pa.table({"id": ["b"], "ts": [4]}), operation="delete")
        feed = t.changes("0")
        assert feed.schema.field("ts").type == pa.int64() and feed.schema.field("extra").type == pa.string()
        feeds.append(sorted((r["_change_type"], r["id"], r["v"], r["extra"], r["ts"]) for r in feed.to_pylist()))
    assert feeds[0] == feeds[1]
    assert ("update_preimage", "a", 10, None, 2) in feeds[0] and ("update_postimage", "a", 11, "x", 3) in feeds[0]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]))
def test_change_data_of_writes_spread_over_tasks(tmp_path_factory, seed, table_type):
    """Writes whose rows and deletes of one file group (even of one key) reach several tasks, as unclustered Spark
    input does: the change data (the claim owner's thrown away where other tasks shared its group) reads like
    the inferred feed."""
    from hudi_ds.write.commit import Coordinator
    from hudi_ds.write.routing import DELETE
    from hudi_ds.write.task import TaskWriter

    rng = random.Random(seed)
    base = tmp_path_factory.mktemp("tasks")
    tables = {cdc: make(base / str(cdc), table_type, cdc) for cdc in (True, False)}
    history = [[[{"id": f"k{i}", "dt": "x", "ts": 1, "v": i, DELETE: False} for i in range(16)]]]
    for step in range(rng.randint(1, 3)):
        parts: list[list[dict]] = [[] for _ in range(rng.randint(1, 3))]
        for i in rng.sample(range(20), rng.randint(1, 12)):
            for _ in range(rng.randint(1, 2)):
                parts[rng.randrange(len(parts))].append(
                    {"id": f"k{i}", "dt": "x", "ts": rng.randint(1, 5), "v": 100 * (step + 1) + i,
                     DELETE: rng.random() < 0.3})
        history.append(parts)
    commits: dict[bool, list[str]] = {True: [], False: []}
    schema = SCHEMA.append(pa.field(DELETE, pa.bool_()))
    for cdc, t in tables.items():
        for parts in history:
            coordinator = Coordinator(t.storage, t.config)
            plan = coordinator.begin("upsert", SCHEMA)
            results = []
            for task, part in enumerate(parts):
                writer = TaskWriter(plan, task_id=task)
                if part:
                    writer.write(pa.Table.from_pylist(part, schema=schema))
                results.append(writer.finish())
            commits[cdc].append(coordinator.commit(plan, results))
    index = {ts: n for name in commits for n, ts in enumerate(commits[name])}
    assert feed(tables[True], "0", None, index) == feed(tables[False], "0", None, index)
    assert validate(tables[True].path)["ok"]


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]),
       cdc=st.booleans())
def test_an_integer_key_gives_the_feed_of_its_strings(tmp_path_factory, seed, table_type, cdc):
    """A table keyed by an integer column (records matched by that column, not by key strings) has the change
    feed of the same history keyed by the integers' decimal strings, in every commit range."""
    rng = random.Random(seed)
    base = tmp_path_factory.mktemp("intkey")
    int_table = make(base / "int", table_type, cdc)
    str_table = make(base / "str", table_type, False)
    history = []
    for step in range(rng.randint(1, 6)):
        batch = [{"id": rng.randrange(-3, 12), "dt": rng.choice("xy"), "ts": rng.randrange(5), "v": step}
                 for _ in range(rng.randint(1, 10))]
        history.append((batch, rng.choice(["upsert", "upsert", "insert", "delete"])))
    int_schema = SCHEMA.set(0, pa.field("id", pa.int64()))
    commits: dict[str, list[str]] = {"int": [], "str": []}
    for batch, op in history:
        commits["int"].append(int_table.write(pa.Table.from_pylist(batch, schema=int_schema), operation=op))
        as_strings = [{**r, "id": str(r["id"])} for r in batch]
        commits["str"].append(str_table.write(pa.Table.from_pylist(as_strings, schema=SCHEMA), operation=op))
    index = {ts: n for name in commits for n, ts in enumerate(commits[name])}

    def stringified(rows_: list[tuple]) -> list[tuple]:
        return sorted(tuple(str(v) if i == 3 and v is not None else v for i, v in enumerate(r)) for r in rows_)

    points = ["0", *range(len(history))]
    for _ in range(4):
        a, b = sorted(rng.sample(points, 2), key=lambda p: -1 if p == "0" else p)
        ranges = {name: ("0" if a == "0" else commits[name][a], commits[name][b]) for name in commits}
        assert stringified(feed(int_table, *ranges["int"], index)) == feed(str_table, *ranges["str"], index), (a, b)


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("run_bytes", [1, 1 << 40])
def test_change_data_read_a_few_groups_at_a_time(tmp_path, monkeypatch, mode, run_bytes):
    """Change data decoded in runs of file groups (each group its own run, or all in one) reads as the inferred
    feed, images taken from the groups' states included."""
    from hudi_ds.read import changes

    monkeypatch.setattr(changes, "_BATCH_BYTES", run_bytes)
    on, off = make(tmp_path / "on", "MERGE_ON_READ", True, mode), make(tmp_path / "off", "MERGE_ON_READ", False)
    rng = random.Random(7)
    history = [pa.Table.from_pylist([{"id": f"k{i}", "dt": "xyz"[i % 3], "ts": 1, "v": i} for i in range(30)],
                                    schema=SCHEMA)]
    for step in range(3):
        history.append(pa.Table.from_pylist(
            [{"id": f"k{rng.randrange(40)}", "dt": "xyz"[i % 3], "ts": 2 + step, "v": 100 + step} for i in range(15)],
            schema=SCHEMA))
    commits = {name: [t.write(h) for h in history] for name, t in (("on", on), ("off", off))}
    commits["on"].append(on.write(pa.table({"id": ["k1", "k2"], "dt": ["y", "z"], "ts": [9, 9]}), operation="delete"))
    commits["off"].append(off.write(pa.table({"id": ["k1", "k2"], "dt": ["y", "z"], "ts": [9, 9]}), operation="delete"))
    index = {ts: n for name in commits for n, ts in enumerate(commits[name])}
    assert feed(on, commits["on"][0], None, index) == feed(off, commits["off"][0], None, index)
    assert len(cdc_files(on.path)) >= 6  # several groups per commit, so several runs per read


@pytest.mark.parametrize("mode", MODES)
def test_change_data_rows_keep_their_order_however_the_groups_are_batched(tmp_path, monkeypatch, mode):
    """The feed of change data decoded in runs of groups on several threads (one group per run) is the feed
    decoded in one run, row for row in the same order: by kind of change, then file group."""
    from hudi_ds.read import changes

    on = make(tmp_path / "on", "MERGE_ON_READ", True, mode)
    on.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "xyz"[i % 3], "ts": 1, "v": i} for i in range(40)],
                                  schema=SCHEMA))
    start = on.write(pa.Table.from_pylist([{"id": f"k{i}", "dt": "xyz"[i % 3], "ts": 2, "v": -i}
                                           for i in range(0, 60, 3)], schema=SCHEMA))
    end = on.write(pa.table({"id": ["k1", "k5", "k9"], "dt": ["y", "z", "x"], "ts": [9, 9, 9]}), operation="delete")
    reads = {}
    for run_bytes, threads in ((1 << 40, 1), (1, 4)):
        monkeypatch.setattr(changes, "_BATCH_BYTES", run_bytes)
        monkeypatch.setattr(changes, "READ_THREADS", threads)
        reads[run_bytes] = on.changes("0", end)
    assert reads[1].num_rows > 40 and reads[1].equals(reads[1 << 40])
    # 14 of the 20 keys the second commit wrote existed: 14 pre-images, 14 post-images, 6 inserts
    assert reads[1].filter(pa.compute.equal(reads[1]["_commit_time"], start)).num_rows == 14 * 2 + 6
