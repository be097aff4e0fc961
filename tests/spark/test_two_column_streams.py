"""Two streaming queries filling different columns of the same keys of one partial-update table (KEEP_VALUES,
commit-time ordering: Paimon's partial-update engine, the "join" of Hudi's streaming users), each killed with SIGKILL
while it runs and restarted from its checkpoint: the table ends as the join of the two sources, the same for
hudi-rs once compacted, with nothing pending or orphaned."""

from __future__ import annotations

import os
import random
import subprocess
import sys
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

HERE = Path(__file__).resolve().parents[1]
JOB = HERE / "streaming_job" / "run_column_stream.py"
sys.path.insert(0, str(HERE / "streaming_job"))

from jobs import files_by_batch, files_read, kill_group  # noqa: E402
from tables import hudi_rs  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.cli.validate import validate  # noqa: E402

pytestmark = [pytest.mark.spark, pytest.mark.slow]

CI = os.environ.get("CI") == "true"
N_FILES = 4 if CI else 10  # per source, one micro-batch each
KEYS = [f"k{i:02d}" for i in range(24)]
COLUMNS = {"a": pa.schema([("id", pa.string()), ("name", pa.string()), ("city", pa.string())]),
           "b": pa.schema([("id", pa.string()), ("price", pa.float64()), ("stock", pa.int64())])}
SEED = {"id": "seed", "name": "n", "city": "c", "price": 1.0, "stock": 1}


def _source(side: str, rng: random.Random) -> list[list[dict]]:
    files = []
    for n in range(N_FILES):
        ids = rng.sample(KEYS, 8)
        if side == "a":
            files.append([{"id": k, "name": f"{k}-name{n}", "city": f"city{n}"} for k in ids])
        else:
            files.append([{"id": k, "price": float(n), "stock": n * 10} for k in ids])
    return files


def _write_source(path: Path, side: str, files: list[list[dict]]) -> None:
    path.mkdir(parents=True)
    for n, rows in enumerate(files):
        file = path / f"part-{n:03d}.parquet"
        pq.write_table(pa.Table.from_pylist(rows, schema=COLUMNS[side]), file)
        os.utime(file, (1_700_000_000 + n, 1_700_000_000 + n))


def _allowed(sources: dict[str, list[list[dict]]], batches: dict[str, list[list[str]]]) -> dict[str, set[tuple]]:
    """Each key's possible final rows: per side, the columns the last micro-batch that carried the key left (null
    where none did). A micro-batch that read several source files (Spark's after a restart) holds one write's rows,
    and commit-time ordering has no order among one write's rows in different Spark partitions: any of its versions
    of the key may win, as in Hudi."""
    fields = {"a": ("name", "city"), "b": ("price", "stock")}
    last: dict[str, dict[str, set[tuple]]] = {"seed": {"a": {("n", "c")}, "b": {(1.0, 1)}}}
    for side, side_batches in batches.items():
        for names in side_batches:
            versions: dict[str, set[tuple]] = {}
            for name in names:
                for r in sources[side][int(name.removeprefix("part-").removesuffix(".parquet"))]:
                    versions.setdefault(r["id"], set()).add(tuple(r[f] for f in fields[side]))
            for key, found in versions.items():
                last.setdefault(key, {})[side] = found
    return {key: {a + b for a in sides.get("a", {(None, None)}) for b in sides.get("b", {(None, None)})}
            for key, sides in last.items()}


def _start(tmp: Path, side: str) -> subprocess.Popen:
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cmd = [sys.executable, str(JOB), str(tmp / side), str(tmp / "table"), str(tmp / f"ck-{side}"), f"writer-{side}",
           "--until-files", str(N_FILES), *(["--compaction-every", "3"] if side == "a" else [])]
    log = open(tmp / f"job-{side}.log", "ab")  # noqa: SIM115 - closed with the process
    return subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)


def test_two_streams_of_different_columns_killed_and_restarted_end_as_their_join(tmp_path: Path) -> None:
    rng = random.Random(5)
    sources = {side: _source(side, rng) for side in COLUMNS}
    for side, files in sources.items():
        _write_source(tmp_path / side, side, files)
    t = HudiTable.create(str(tmp_path / "table"), table_name="wide", record_key="id", table_type="MERGE_ON_READ",
                         buckets=2, options={"hoodie.write.table.version": "9",
                                             "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
                                             "hoodie.table.partial.update.mode": "KEEP_VALUES"})
    t.write(pa.Table.from_pylist([SEED]))  # the table's whole schema, which partial writes must keep to
    jobs = {side: _start(tmp_path, side) for side in COLUMNS}
    try:
        for side in COLUMNS:  # each job killed once it has committed something, then started again
            deadline = time.monotonic() + 240
            while files_read(str(tmp_path / f"ck-{side}")) < 1 and jobs[side].poll() is None:
                assert time.monotonic() < deadline, (tmp_path / f"job-{side}.log").read_text()[-3000:]
                time.sleep(0.2)
            time.sleep(rng.random())
            kill_group(jobs[side])
            jobs[side] = _start(tmp_path, side)
        for side, proc in jobs.items():
            code = proc.wait(timeout=300)
            assert code == 0, (tmp_path / f"job-{side}.log").read_text()[-3000:]
    finally:
        for proc in jobs.values():
            kill_group(proc)
    table = HudiTable(str(tmp_path / "table"))
    batches = {side: files_by_batch(str(tmp_path / f"ck-{side}")) for side in COLUMNS}
    assert {side: sorted(sum(b, [])) for side, b in batches.items()} == {
        side: [f"part-{n:03d}.parquet" for n in range(N_FILES)] for side in COLUMNS}, batches
    allowed = _allowed(sources, batches)

    def joined(found: dict[str, tuple]) -> None:
        assert found.keys() == allowed.keys()
        lost = {k: (v, allowed[k]) for k, v in found.items() if v not in allowed[k]}
        assert not lost, f"rows other than the sources' last versions (found, allowed), batches {batches}: {lost}"

    def state(rows: pa.Table) -> dict[str, tuple]:
        ids = rows["id"].to_pylist()
        assert len(ids) == len(set(ids)), "duplicate record keys"
        return {r["id"]: (r["name"], r["city"], r["price"], r["stock"]) for r in rows.to_pylist()}

    merged = state(table.to_arrow(columns=["id", "name", "city", "price", "stock"]))
    joined(merged)
    assert [i for i in table.timeline() if not i.is_completed and i.action in ("deltacommit", "commit")] == []
    report = validate(str(tmp_path / "table"))
    assert report["ok"], report["errors"]
    table.compact()  # hudi-rs does not merge partial log blocks: it reads the compacted table the same
    assert state(table.to_arrow(columns=["id", "name", "city", "price", "stock"])) == merged
    assert state(hudi_rs(str(tmp_path / "table")).select(["id", "name", "city", "price", "stock"])) == merged
