"""Insert-if-absent through the streaming sink: an append-only event stream that repeats events (within a
micro-batch and across them) lands in the table once per key, each key keeping its first micro-batch's event."""

from __future__ import annotations

import os
import random
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark]


def _events(n_files: int, seed: int = 3) -> list[list[dict]]:
    """Files of events; every event is sent again, in the same file or a later one."""
    rng = random.Random(seed)
    files: list[list[dict]] = [[] for _ in range(n_files)]
    for i in range(40):
        event = {"id": f"e{i:03d}", "ts": i, "v": f"first-{i}"}
        first = rng.randrange(n_files)
        files[first].append(event)
        files[rng.randrange(first, n_files)].append({**event, "v": f"again-{i}"})
    return files


def test_an_event_stream_is_written_once_per_key(spark: Any, tmp_path: Path) -> None:
    files = _events(4)
    src = tmp_path / "src"
    src.mkdir()
    for n, rows in enumerate(files):  # one micro-batch per file, in file order
        path = src / f"part-{n:03d}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=pa.schema([("id", pa.string()), ("ts", pa.int64()),
                                                                    ("v", pa.string())])), path)
        os.utime(path, (1_700_000_000 + n, 1_700_000_000 + n))
    stream = spark.readStream.schema("id string, ts long, v string").option("maxFilesPerTrigger", 1).parquet(str(src))
    query = (stream.writeStream.format("hudi-py")
             .option("hoodie.table.name", "events")
             .option("hoodie.datasource.write.recordkey.field", "id")
             .option("hoodie.datasource.write.precombine.field", "ts")
             .option("hoodie.datasource.insert.dup.policy", "drop")
             .option("checkpointLocation", str(tmp_path / "ck"))
             .trigger(availableNow=True)
             .start(str(tmp_path / "table")))
    query.awaitTermination(240)
    assert query.exception() is None
    # within a micro-batch the repeated event ties on ts: the later row wins (the merge rule); a later micro-batch's
    # copy finds the key held and is dropped
    expected: dict[str, str] = {}
    for rows in files:
        batch: dict[str, str] = {}
        for r in rows:
            batch[r["id"]] = r["v"]
        for k, v in batch.items():
            expected.setdefault(k, v)
    got = HudiTable(str(tmp_path / "table")).to_arrow(columns=["id", "v"]).to_pylist()
    assert len(got) == len(expected)
    assert {r["id"]: r["v"] for r in got} == expected
