"""The streaming reader against reality: a change-feed query in a subprocess, killed with SIGKILL at random
moments while a writer keeps committing (upserts, deletes, compactions), restarted from its checkpoint. Its
output (Spark's exactly-once parquet sink) must hold every change of the table exactly once."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path

import pyarrow as pa
import pytest

HERE = Path(__file__).resolve().parents[1]
JOB = HERE / "streaming_job" / "run_reader.py"
sys.path.insert(0, str(HERE / "streaming_job"))

from jobs import consumed, kill_group  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402

# CI kills once, over a shorter history (each restart costs a Spark start); the full run is
# `./run chaos --kinds stream_reader`
pytestmark = pytest.mark.slow
CI = os.environ.get("CI") == "true"
KILLS = int(os.environ.get("HUDI_DS_READER_KILLS", "1" if CI else "3"))
COMMITS = 20 if CI else 45
COLUMNS = ["_commit_time", "_change_type", "_hoodie_partition_path", "_hoodie_record_key", "ts", "v"]


def _start(tmp: Path, until: str) -> subprocess.Popen:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cmd = [sys.executable, str(JOB), str(tmp / "table"), str(tmp / "out"), str(tmp / "ck"), "--until-instant", until]
    log = open(tmp / "reader.log", "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)


class Writer(threading.Thread):
    """Commits upserts and deletes of 40 keys (a compaction every 7 commits) at a steady pace."""

    def __init__(self, table: HudiTable, commits: int, pause_s: float, seed: int) -> None:
        super().__init__(daemon=True)
        self.table, self.commits, self.pause_s = table, commits, pause_s
        self.rng = random.Random(seed)
        self.last = "0"

    def commit(self, n: int) -> None:
        keys = self.rng.sample(range(40), self.rng.randint(1, 12))
        rows = pa.table({"id": [f"k{k}" for k in keys], "p": [f"p{k % 2}" for k in keys],
                         "ts": [n] * len(keys), "v": [self.rng.random() for _ in keys]})
        op = "delete" if n > 2 and self.rng.random() < 0.25 else "upsert"
        self.last = self.table.write(rows, op)
        if n % 7 == 6:
            self.table.compact()

    def run(self) -> None:
        for n in range(self.commits):
            self.commit(n)
            time.sleep(self.pause_s)


def test_killed_and_restarted_reader_emits_every_change_once(spark, tmp_path):
    table = HudiTable.create(str(tmp_path / "table"), table_name="feed", record_key="id", ordering_field="ts",
                             partition_by="p", buckets=2,
                             options={"hoodie.clean.automatic": "false", "hoodie.archive.automatic": "false"})
    # the killed reader falls behind by many commits; it must not fall out of the retained history
    writer = Writer(table, commits=COMMITS, pause_s=0.7, seed=11)
    for n in range(5):  # history before the reader starts
        writer.commit(n)
    writer.commits -= 5
    writer.start()
    rng = random.Random(5)
    ck = str(tmp_path / "ck")
    try:
        for _ in range(KILLS):  # each run gets past one more micro-batch, then dies at a random moment
            before = consumed(ck)
            proc = _start(tmp_path, until="9" * 17)
            deadline = time.monotonic() + 180
            while consumed(ck) == before and time.monotonic() < deadline and proc.poll() is None:
                time.sleep(0.1)
            time.sleep(rng.uniform(0.0, 1.5))
            kill_group(proc)
            assert consumed(ck) > before, (tmp_path / "reader.log").read_text()[-3000:]
    finally:
        writer.join()
    progressed = consumed(ck)
    proc = _start(tmp_path, until=writer.last)
    try:
        assert proc.wait(timeout=300) == 0, (tmp_path / "reader.log").read_text()[-3000:]
    finally:
        kill_group(proc)

    got = spark.read.parquet(str(tmp_path / "out")).toArrow()
    expected = table.changes("0")
    assert got.num_rows == expected.num_rows > 0
    assert _rows(got) == _rows(expected)  # every change once: no duplicate, none missed
    assert progressed < writer.last  # the killed runs stopped mid-stream


def _rows(t: pa.Table) -> list[tuple]:
    return sorted(zip(*(t[c].to_pylist() for c in COLUMNS), strict=True), key=repr)
