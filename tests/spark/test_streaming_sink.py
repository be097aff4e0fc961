"""The streaming sink against reality: a streaming query in a subprocess, killed with SIGKILL at random
moments and at named points, restarted from its checkpoint; the table must end exactly as the model,
readable by hudi-rs, with no duplicate, no pending instant, no orphan file and no micro-batch committed twice
(the kill after a commit Spark did not record makes Spark replay that batch), while snapshot reads race the
restarted stream (compaction and cleaning on) and see only committed states."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

HERE = Path(__file__).resolve().parents[1]
JOB = HERE / "streaming_job" / "run_stream.py"
sys.path.insert(0, str(HERE / "streaming_job"))

from jobs import kill_group  # noqa: E402
from source_data import batches, model, write_files  # noqa: E402
from tables import hudi_rs  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.cli.validate import validate  # noqa: E402
from hudi_ds.write.checkpoint import BATCH_KEY  # noqa: E402

pytestmark = pytest.mark.slow
CI = os.environ.get("CI") == "true"
# CI streams fewer files (each is one micro-batch of ~1 s); the pause points are all reached within the first dozen
N_FILES = 24 if CI else 160
PAUSE_POINTS = ["task_files_written", "before_commit", "commit_publishing", "after_commit",
                "compaction_scheduled", "compaction_file_written"]
# Each kill costs a Spark start (~40 s on two busy cores). CI kills once at each kind of moment: files written but not
# committed, a commit done that Spark did not record (the replay), a compaction half done; the API chaos kinds kill
# the shared commit code at random. This run kills at every pause point and at random moments too; the long run is
# `./run chaos --kinds stream_sink` (100 kills).
CI_PAUSE_POINTS = ["before_commit", "after_commit", "compaction_file_written"]
KILLS_PER_RUN = int(os.environ.get("HUDI_DS_STREAM_KILLS", "3" if CI else "10"))


def _start(tmp: Path, pause: list[str] | None, until: int = N_FILES) -> subprocess.Popen:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    if pause:
        env.update(HUDI_DS_TEST_PAUSE_AT=",".join(pause), HUDI_DS_TEST_PAUSE_DIR=str(tmp / "pauses"))
    cmd = [sys.executable, str(JOB), str(tmp / "src"), str(tmp / "table"), str(tmp / "ck"), "--until-files",
           str(until), "--compaction-every", "3"]
    log = open(tmp / "job.log", "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)


def _finish(proc: subprocess.Popen, tmp: Path, timeout: float = 300) -> None:
    """Wait for a job to end by itself; kill it if it does not (no stray Spark left behind)."""
    try:
        code = proc.wait(timeout=timeout)
    except subprocess.TimeoutExpired:
        kill_group(proc)
        code = -1
    assert code == 0, (tmp / "job.log").read_text()[-3000:]


def _state(table: HudiTable) -> dict[str, list]:
    t = table.to_arrow(columns=["id", "ts", "amount"])
    ids = t["id"].to_pylist()
    assert len(ids) == len(set(ids)), "duplicate record keys"
    return {r["id"]: [r["ts"], r["amount"]] for r in t.to_pylist()}


def _expected(all_batches: list) -> dict[str, list]:
    return {k: list(v) for k, v in model(all_batches).items()}


@pytest.fixture(scope="module")
def stream_data(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("stream")
    data = batches(N_FILES, 40, keys=400)
    write_files(tmp / "src", data)
    (tmp / "pauses").mkdir()
    return tmp, data


def test_killed_and_restarted_stream_ends_exactly_as_the_model(stream_data):
    tmp, data = stream_data
    rng = random.Random(11)
    points = CI_PAUSE_POINTS if KILLS_PER_RUN <= len(CI_PAUSE_POINTS) else PAUSE_POINTS
    plan: list[tuple[str, object]] = [("pause", p) for p in points[:KILLS_PER_RUN]]
    while len(plan) < KILLS_PER_RUN:
        plan.append(("random", rng.uniform(9.0, 13.0)))
    rng.shuffle(plan)
    if any(mode == "random" for mode, _ in plan):
        _first_batch_committed(tmp)
    kills = 0
    log = []
    for mode, arg in plan:
        proc = _start(tmp, [arg] if mode == "pause" else None)
        # a paused job blocks until killed: the long wait for a pause point only covers a slow Spark start
        deadline = time.monotonic() + (arg if mode == "random" else 180.0)  # type: ignore[operator]
        marker = tmp / "pauses" / str(arg)
        while time.monotonic() < deadline and proc.poll() is None:
            if mode == "pause" and marker.exists():
                time.sleep(0.2)
                break
            time.sleep(0.1)
        reached = mode == "pause" and marker.exists()
        if proc.poll() is None:
            kill_group(proc)
            kills += 1
        log.append((mode, arg, reached, proc.returncode))
    print("kill plan:", log)
    assert all(reached for mode, _, reached, _ in log if mode == "pause"), log
    seen, errors = _race_snapshot_reads(_start(tmp, None), tmp)
    assert kills >= min(KILLS_PER_RUN, 10)
    assert not errors, errors[:3]
    states = [_expected(data[:i]) for i in range(len(data) + 1)]
    assert seen and all(state in states for state in seen), "a snapshot read saw a state between commits"
    table = HudiTable(str(tmp / "table"))
    expected = _expected(data)
    assert _state(table) == expected
    theirs = hudi_rs(str(tmp / "table")).select(["id", "ts", "amount"]).to_pylist()
    assert {r["id"]: [r["ts"], r["amount"]] for r in theirs} == expected
    assert [i for i in table.timeline() if not i.is_completed and i.action in ("deltacommit", "commit")] == []
    report = validate(str(tmp / "table"))
    assert report["ok"], report["errors"]
    assert any(i.action == "commit" for i in table.timeline()), "compaction never ran"
    committed = _committed_batches(table)
    assert committed == sorted(set(committed)), f"a micro-batch was committed twice: {committed}"
    _check_change_feed(table, expected)


def _race_snapshot_reads(proc: subprocess.Popen, tmp: Path) -> tuple[list[dict], list[BaseException]]:
    """Read the table's snapshot over and over while the job runs to its end: every state seen is kept."""
    seen: list[dict] = []
    errors: list[BaseException] = []

    def reader() -> None:
        while proc.poll() is None:
            try:
                table = HudiTable(str(tmp / "table"))
                seen.append(_state(table))
            except Exception as exc:  # noqa: BLE001 - collected and asserted by the caller
                errors.append(exc)
            time.sleep(0.05)

    thread = threading.Thread(target=reader)
    thread.start()
    try:
        # the restarted job streams what the killed ones left, one ~1 s micro-batch a file (several on a loaded
        # machine: the full run's 160 files outlasted a flat 300 s at a load average of 15)
        _finish(proc, tmp, timeout=120 + 4 * N_FILES)
    finally:
        thread.join()
    return seen, errors


def _committed_batches(table: HudiTable) -> list[int]:
    """The micro-batch ids of the active timeline's commits, in commit order."""
    timeline = table.snapshot().timeline
    extras = (timeline.commit_metadata(i).extra_metadata or {} for i in timeline.commits())
    return [int(extra[BATCH_KEY]) for extra in extras if BATCH_KEY in extra]


def _first_batch_committed(tmp: Path, timeout: float = 180) -> None:
    """Run the stream until its first micro-batch committed, then kill it. Spark refuses to restart a query
    killed while it wrote its very first offsets (a temporary file left in <checkpoint>/offsets:
    STATE_STORE_CHECKPOINT_LOCATION_NOT_EMPTY), whatever the sink; the random kills that test the sink come after
    (a pause point is always past that write: the sink runs once the batch's offsets are written)."""
    proc = _start(tmp, None)
    deadline = time.monotonic() + timeout
    try:
        while time.monotonic() < deadline and proc.poll() is None:
            if (tmp / "ck" / "commits" / "0").exists():
                return
            time.sleep(0.2)
        raise AssertionError("the stream committed no micro-batch: " + (tmp / "job.log").read_text()[-3000:])
    finally:
        kill_group(proc)


def _check_change_feed(table: HudiTable, expected: dict[str, list]) -> None:
    """The change data the restarted sink wrote holds each change once: replayed from a commit cleaning kept over
    the table as of that commit, it ends as the table ends, every pre-image being the state it replaces."""
    from hudi_ds.read.retention import earliest_retained

    assert list(Path(table.path).rglob(".*-cdc")), "the sink wrote no change data"
    commits = [i.requested_time for i in table.timeline() if i.is_completed and i.action == "deltacommit"]
    retained = earliest_retained(table.snapshot().timeline) or "0"
    start = next(c for c in commits if c >= retained)
    state = {r["id"]: [r["ts"], r["amount"]] for r in table.to_arrow(as_of=start).to_pylist()}
    order = {"update_preimage": 0, "delete": 1, "update_postimage": 2, "insert": 3}
    feed = sorted(table.changes(start).to_pylist(), key=lambda r: (r["_commit_time"], order[r["_change_type"]]))
    for r in feed:
        kind, key, value = r["_change_type"], r["id"], [r["ts"], r["amount"]]
        if kind in ("update_preimage", "delete"):
            assert state.pop(key) == value, (r["_commit_time"], kind, key)
        else:
            assert key not in state, (r["_commit_time"], kind, key)
            state[key] = value
    assert state == expected
