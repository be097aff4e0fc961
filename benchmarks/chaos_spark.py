"""The chaos suite's Spark kinds (see chaos.py): the streaming sink and the change-feed reader, each a Spark job
killed with SIGKILL and restarted from its checkpoint. Local disk only."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from chaos import TESTS, Tally, _as_the_next_writer


def _spark_env() -> dict[str, str]:
    sys.path.insert(0, str(TESTS / "streaming_job"))
    return dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)


def _run_until_kill(proc: subprocess.Popen, position: Callable[[], Any], rng: random.Random) -> None:
    """Let a Spark job run until its kill: one run in five at a random moment of its start (recovery included),
    the others a random moment after it finished one more micro-batch (a session takes ~6-10 s to start)."""
    if rng.random() < 0.2:
        deadline = time.monotonic() + rng.uniform(2.0, 10.0)
    else:
        start, deadline = position(), time.monotonic() + 90
        while proc.poll() is None and time.monotonic() < deadline and position() == start:
            time.sleep(0.1)
        deadline = time.monotonic() + rng.uniform(0.0, 3.0)
    while proc.poll() is None and time.monotonic() < deadline:
        time.sleep(0.1)


def _kill_or_fail(tally: Tally, proc: subprocess.Popen, log: Path) -> bool:
    """Kill a job still running (True); a job that ended by itself with an error is a failure."""
    from jobs import kill_group

    if proc.poll() is None:
        kill_group(proc)
        tally.kills += 1
        return True
    if proc.returncode != 0:
        tally.failures.append(f"the job failed by itself (exit {proc.returncode}): "
                              f"{log.read_text(errors='replace').strip().splitlines()[-1:]}")
    return False


def _table_checks(tally: Tally, uri: str) -> None:
    """hudi-rs reads what we read (after the dead writers' instants are rolled back), and validate is clean."""
    from hudi import HudiTableBuilder

    from hudi_ds import HudiTable
    from hudi_ds.cli.validate import validate

    table = HudiTable(uri)
    _as_the_next_writer(table)
    ours = table.to_arrow(columns=["_hoodie_record_key", "_hoodie_commit_time"]).to_pylist()
    theirs = [r for b in HudiTableBuilder.from_base_uri(uri).build().read()
              for r in b.select(["_hoodie_record_key", "_hoodie_commit_time"]).to_pylist()]
    tally.hudi_rs_agrees += sorted(ours, key=repr) == sorted(theirs, key=repr)
    if sorted(ours, key=repr) != sorted(theirs, key=repr):
        tally.failures.append(f"hudi-rs differs: {len(theirs)} rows against our {len(ours)}")
    report = validate(table)
    tally.validate_clean += bool(report["ok"])
    if not report["ok"]:
        tally.failures.append(f"validate: {report['errors'][:2]}")


def run_stream_sink(kills: int, work: Path, uri: str, rng: random.Random) -> Tally:
    """The streaming sink killed and restarted from its checkpoint: after each kill the table holds exactly the
    first n source files, at least the files of the micro-batches Spark finished and at most the files its
    source had handed out (a micro-batch may take more than one file after a restart: Spark's file source
    logs a file before the batch that reads it is planned)."""
    env = _spark_env()
    from jobs import finished_batch_ids
    from source_data import batches, states, write_files

    from hudi_ds import HudiTable

    n_files = 25 * kills + 50  # more than the runs get through: every kill lands mid-stream
    data = batches(n_files, 40, keys=400)
    write_files(work / "sink-src", data)
    prefix_hashes = [_state_hash({})] + [_state_hash(state) for state in states(data)]
    ck, log, job = work / "sink-ck", work / "stream_sink.log", TESTS / "streaming_job" / "run_stream.py"
    tally, started, progress = Tally(), time.monotonic(), [0]
    while tally.kills < kills and not tally.failures:
        proc = subprocess.Popen([sys.executable, str(job), str(work / "sink-src"), uri, str(ck), "--until-files",
                                 str(n_files), "--compaction-every", "3"], env=env, stdout=open(log, "ab"),
                                stderr=subprocess.STDOUT, start_new_session=True)
        _run_until_kill(proc, lambda: finished_batch_ids(str(ck)) and max(finished_batch_ids(str(ck))), rng)
        if not _kill_or_fail(tally, proc, log):
            break
        done = max(finished_batch_ids(str(ck)), default=-1) + 1
        lower, upper = _files_handed_out(ck, done - 1), _files_handed_out(ck, None)
        tally.writes = lower
        if not (work / "sink-ck").exists() or not Path(uri, ".hoodie").exists():
            continue  # killed before the query started
        sink = HudiTable(uri)
        got = sink.to_arrow(columns=["id", "ts", "amount"]).to_pylist() if "id" in sink.schema.names else []
        rows = {r["id"]: (r["ts"], r["amount"]) for r in got}
        matches = [n for n, h in enumerate(prefix_hashes) if h == _state_hash(rows)]
        tally.rounds += 1
        tally.duplicates += len(rows) != len(got)
        if any(lower <= n <= upper for n in matches) and len(rows) == len(got):
            tally.consistent += 1
        elif matches:
            tally.lost += 1
            tally.failures.append(f"the table holds the first {matches[0]} source files; Spark's finished "
                                  f"micro-batches read {lower}, its source handed out {upper}")
        else:
            tally.partial += 1
            tally.failures.append(f"the table matches no prefix of the source files (Spark finished {done} "
                                  "micro-batches)")
        _check_progress(tally, progress, done)
        _table_checks(tally, uri)
    tally.seconds = time.monotonic() - started
    return tally


def _files_handed_out(ck: Path, batch: int | None) -> int:
    """How many source files Spark's file source logged for micro-batches up to `batch` (all if None; none
    for a batch below 0): its log (sources/0, compacted every 10 entries) names each file with its batch."""
    if batch is not None and batch < 0:
        return 0
    end = None if batch is None else json.loads(Path(ck, "offsets", str(batch)).read_text().splitlines()[-1])["logOffset"]
    paths: set[str] = set()
    source_log = Path(ck, "sources", "0")
    for log in (p for p in source_log.glob("*") if p.name.split(".")[0].isdigit()) if source_log.exists() else []:
        for line in log.read_text().splitlines()[1:]:
            entry = json.loads(line)
            if end is None or entry["batchId"] <= end:
                paths.add(entry["path"])
    return len(paths)


def _check_progress(tally: Tally, progress: list[Any], done: Any, runs: int = 8) -> None:
    """Restarted jobs must get on: the same position after `runs` runs in a row is a failure."""
    progress.append(done)
    if len(progress) > runs and len(set(progress[-runs:])) == 1:
        tally.failures.append(f"no progress past {done} in {runs} runs")


def _state_hash(state: dict[str, Any]) -> int:
    return hash(frozenset(state.items()))


class _FeedWriter:
    """Commits upserts and deletes of 40 keys (a compaction every 7 commits) at a steady pace in a thread;
    `paused()` holds it between commits while the table is checked."""

    def __init__(self, uri: str, seed: int) -> None:
        import threading

        from hudi_ds import HudiTable

        self.table = HudiTable.create(uri, table_name="feed", record_key="id", ordering_field="ts",
                                      partition_by="p", buckets=2,
                                      options={"hoodie.clean.automatic": "false",
                                               "hoodie.archive.automatic": "false"})
        self.rng, self.n, self.lock = random.Random(seed), 0, threading.Lock()
        self.stop, self.error = threading.Event(), None
        self.thread = threading.Thread(target=self._run, daemon=True)

    def commit(self) -> None:
        import pyarrow as pa

        keys = self.rng.sample(range(40), self.rng.randint(1, 12))
        rows = pa.table({"id": [f"k{k}" for k in keys], "p": [f"p{k % 2}" for k in keys],
                         "ts": [self.n] * len(keys), "v": [self.rng.random() for _ in keys]})
        with self.lock:
            self.table.write(rows, "delete" if self.n > 2 and self.rng.random() < 0.25 else "upsert")
            if self.n % 7 == 6:
                self.table.compact()
        self.n += 1

    def _run(self) -> None:
        try:
            while not self.stop.is_set():
                self.commit()
                time.sleep(0.3)
        except BaseException as exc:  # reported by the suite
            self.error = exc


FEED_COLUMNS = ["_commit_time", "_change_type", "_hoodie_partition_path", "_hoodie_record_key", "ts", "v"]


def _committed_output(out: Path) -> list[tuple]:
    """Rows of the files Spark's file sink committed (its _spark_metadata log; compacted every 10 batches)."""
    import pyarrow.parquet as pq

    meta = out / "_spark_metadata"
    logs = sorted((p for p in meta.glob("*") if p.name.split(".")[0].isdigit()),
                  key=lambda p: int(p.name.split(".")[0])) if meta.exists() else []
    compacted = [p for p in logs if p.name.endswith(".compact")]
    start = int(compacted[-1].name.split(".")[0]) if compacted else -1
    files: set[str] = set()
    for p in logs:
        if int(p.name.split(".")[0]) < start or (p.name.endswith(".compact") and p != compacted[-1]):
            continue
        for line in p.read_text().splitlines()[1:]:
            entry = json.loads(line)
            if entry["action"] == "add":
                files.add(entry["path"].removeprefix("file://"))
    rows: list[tuple] = []
    for f in files:
        t = pq.read_table(f)
        rows.extend(zip(*(t[c].to_pylist() for c in FEED_COLUMNS), strict=True))
    return sorted(rows, key=repr)


def run_stream_reader(kills: int, work: Path, uri: str, rng: random.Random) -> Tally:
    """The change-feed reader killed and restarted while a writer commits: after each kill its committed output
    holds the table's changes up to the commit it consumed (or up to the end of the micro-batch in flight,
    whose output Spark commits before its own commit log), each exactly once."""
    env = _spark_env()
    from jobs import consumed

    writer = _FeedWriter(uri, seed=11)
    for _ in range(5):  # history before the reader starts
        writer.commit()
    writer.thread.start()
    ck, out, log = work / "feed-ck", work / "feed-out", work / "stream_reader.log"
    job = TESTS / "streaming_job" / "run_reader.py"
    tally, started, progress = Tally(), time.monotonic(), ["0"]
    try:
        while tally.kills < kills and not tally.failures:
            proc = subprocess.Popen([sys.executable, str(job), uri, str(out), str(ck), "--until-instant", "9" * 17],
                                    env=env, stdout=open(log, "ab"), stderr=subprocess.STDOUT,
                                    start_new_session=True)
            _run_until_kill(proc, lambda: consumed(str(ck)), rng)
            if not _kill_or_fail(tally, proc, log) or writer.error is not None:
                break
            with writer.lock:
                done = consumed(str(ck))
                tally.writes = len([i for i in writer.table.timeline() if i.is_completed and i.requested_time <= done])
                got = _committed_output(out)
                ends = [done] + _next_offsets(ck)
                expected = [sorted(zip(*(t[c].to_pylist() for c in FEED_COLUMNS), strict=True), key=repr)
                            for t in (writer.table.changes("0", end) for end in ends if end != "0")] or [[]]
                tally.rounds += 1
                tally.duplicates += len(got) != len(set(got))
                if got in expected:
                    tally.consistent += 1
                elif any(set(got) < set(e) for e in expected):
                    tally.lost += 1
                    tally.failures.append(f"the output misses changes up to {done}")
                else:
                    tally.partial += 1
                    tally.failures.append(f"the output holds changes no consumed range gives (consumed {done})")
                _table_checks(tally, uri)
            _check_progress(tally, progress, done)
    finally:
        writer.stop.set()
        writer.thread.join()
    if writer.error is not None:
        tally.failures.append(f"the writer failed: {type(writer.error).__name__}: {writer.error}")
    tally.seconds = time.monotonic() - started
    return tally


def _next_offsets(ck: Path) -> list[str]:
    """The end offset of the micro-batch planned after the newest finished one, if Spark wrote it."""
    from jobs import finished_batch_ids

    nxt = Path(ck, "offsets", str(max(finished_batch_ids(str(ck)), default=-1) + 1))
    return [str(json.loads(nxt.read_text().splitlines()[-1])["instant"])] if nxt.exists() else []
