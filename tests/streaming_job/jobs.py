"""What the crash-test jobs and their tests share: reading Spark's checkpoint, running a query until it is
done, and killing a job's whole process group (driver JVM and Python workers)."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any


def finished_batch_ids(checkpoint: str) -> list[int]:
    """Ids in Spark's commit log (it keeps only the newest ~100 entries: count by the newest id)."""
    return [int(p.name) for p in Path(checkpoint, "commits").glob("[0-9]*") if p.name.isdigit()]


def consumed(checkpoint: str) -> str:
    """The source offset (`instant`) of the newest micro-batch Spark finished ("0" before any)."""
    ids = finished_batch_ids(checkpoint)
    if not ids:
        return "0"
    lines = Path(checkpoint, "offsets", str(max(ids))).read_text().splitlines()
    return str(json.loads(lines[-1])["instant"])


def files_read(checkpoint: str) -> int:
    """How many source files the finished micro-batches of a file-source query read: the newest one's end offset
    in the file source's log, plus one (after a restart one micro-batch may read more than one file: the source
    logs a file before the batch that reads it is planned, so batch ids and files drift apart)."""
    ids = finished_batch_ids(checkpoint)
    if not ids:
        return 0
    lines = Path(checkpoint, "offsets", str(max(ids))).read_text().splitlines()
    return int(json.loads(lines[-1])["logOffset"]) + 1


def files_by_batch(checkpoint: str) -> list[list[str]]:
    """The source file names each finished micro-batch of a file-source query read, in batch order (a batch after a
    restart may read several: see files_read)."""
    logged: dict[int, str] = {}
    for entry in Path(checkpoint, "sources", "0").glob("[0-9]*"):  # n, and n.compact once Spark compacts its log
        for line in entry.read_text().splitlines()[1:]:
            record = json.loads(line)
            logged[int(record["batchId"])] = Path(record["path"]).name
    out, start = [], 0
    for batch in sorted(finished_batch_ids(checkpoint)):
        lines = Path(checkpoint, "offsets", str(batch)).read_text().splitlines()
        end = int(json.loads(lines[-1])["logOffset"]) + 1
        out.append([logged[i] for i in range(start, end)])
        start = end
    return out


def run_until(spark: Any, query: Any, done: Callable[[], bool]) -> int:
    """Poll until `done()`, then stop the query and the session cleanly; 1 if the query failed first."""
    while not done():
        if query.exception() is not None:
            print(query.exception(), file=sys.stderr)
            return 1
        time.sleep(0.3)
    query.stop()
    spark.stop()
    return 0


def kill_group(proc: subprocess.Popen) -> None:
    """SIGKILL a job started with start_new_session=True, and everything it started."""
    try:
        os.killpg(proc.pid, signal.SIGKILL)
    except ProcessLookupError:
        pass
    proc.wait()
