"""Failures and concurrent writers: nothing half-written, the later of two conflicting commits fails."""

from __future__ import annotations

import os
import threading
import time
from typing import Any

import pyarrow as pa
import pytest
from tables import assert_same_rows, hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.files.naming import parse_log_file
from hudi_ds.log.format import read_blocks
from hudi_ds.spark import register
from hudi_ds.timeline import Timeline

pytestmark = [pytest.mark.spark]

OPTS = {"hoodie.table.name": "cc_t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.bucket.index.num.buckets": "2"}
COLUMNS = ["id", "ts", "v", "dt"]


def data(ids: range, ts: int, dts: tuple[str, ...] = ("a", "b", "c")) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "v": [f"v{i}-{ts}" for i in ids],
                     "dt": [dts[i % len(dts)] for i in ids]})


def save(df: Any, path: str) -> None:
    df.write.format("hudi-py").options(**OPTS).mode("append").save(path)


def slow(df: Any, seconds_per_row: float) -> Any:
    """Tasks that take a while to produce their rows: the write stays open (begun, not committed) meanwhile."""
    from pyspark.sql import functions as F

    def delay(value):  # noqa: ANN001, ANN202 - no hints: pyspark would read them as a pandas UDF's
        time.sleep(seconds_per_row)
        return value

    udf = F.udf(delay, "string", useArrow=False).asNondeterministic()
    return df.withColumn("id", udf(F.col("id")))


def data_files(path: str) -> set[str]:
    out = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        out.update(os.path.relpath(os.path.join(root, f), path) for f in files)
    return out


def assert_clean(path: str) -> None:
    """No pending instant, no markers, and every log block written by a completed commit."""
    t = HudiTable(path)
    assert [i for i in t.timeline() if not i.is_completed] == []
    temp = os.path.join(path, ".hoodie", ".temp")
    assert not os.path.isdir(temp) or os.listdir(temp) == []
    completed = {i.requested_time for i in t.timeline() if i.is_completed}
    for rel in data_files(path):
        partition, _, name = rel.rpartition("/")
        if parse_log_file(partition, name) is not None:
            with open(os.path.join(path, rel), "rb") as f:
                for block in read_blocks(f.read(), rel):
                    assert block.instant_time in completed, (rel, block.instant_time)


def snapshot(spark: Any, path: str) -> list:
    table = spark.read.format("hudi-py").load(path).toArrow()
    return rows(table, table.column_names)


def test_task_failure_mid_write_leaves_table_as_before(spark, table_path):
    save(spark.createDataFrame(data(range(40), 1)).repartition(2), table_path)
    before, files = snapshot(spark, table_path), data_files(table_path)
    timeline_before = {i.requested_time for i in HudiTable(table_path).timeline()}
    env = spark.sparkContext.environment
    env["HUDI_DS_FAIL_AFTER_FILES"] = "1"  # the Python workers of the re-registered source see it
    register(spark)
    try:
        with pytest.raises(Exception) as err:
            save(spark.createDataFrame(data(range(20, 80), 2)).repartition(2), table_path)
        assert "injected failure after 1 data files" in str(err.value)
    finally:
        del env["HUDI_DS_FAIL_AFTER_FILES"]
        register(spark)
    assert snapshot(spark, table_path) == before
    assert data_files(table_path) == files
    t = HudiTable(table_path)
    new = [i for i in t.timeline() if i.requested_time not in timeline_before]
    assert [i.action for i in new] == ["rollback"]
    timeline = Timeline.load(t.storage, 1)
    failed = timeline.read_avro(new[0])["commitsRollback"]
    assert len(failed) == 1
    leftovers = [p for p in os.listdir(os.path.join(table_path, ".hoodie")) if failed[0] in p]
    assert leftovers == [] and not any(failed[0] in f for f in data_files(table_path))
    assert_clean(table_path)
    # the table takes the same write afterwards
    save(spark.createDataFrame(data(range(20, 80), 2)).repartition(2), table_path)
    assert len(snapshot(spark, table_path)) == 80


def _race(spark: Any, path: str, tables: list[pa.Table]) -> list[BaseException | None]:
    barrier = threading.Barrier(len(tables))
    results: list[BaseException | None] = [None] * len(tables)

    def run(i: int) -> None:
        df = slow(spark.createDataFrame(tables[i]).repartition(2), 0.1)
        barrier.wait()
        try:
            save(df, path)
        except BaseException as exc:  # noqa: BLE001 - reported to the test thread
            results[i] = exc

    threads = [threading.Thread(target=run, args=(i,)) for i in range(len(tables))]
    for th in threads:
        th.start()
    for th in threads:
        th.join(timeout=300)
    return results


def test_conflicting_writers_one_fails_and_leaves_nothing(spark, table_path):
    # on a loaded machine one job may commit before the other claims its instant (no conflict then): race again
    # on a fresh table, up to three times
    for attempt in range(3):
        path = f"{table_path}-{attempt}"
        save(spark.createDataFrame(data(range(30), 1)).repartition(2), path)
        mine, theirs = data(range(30), 2), data(range(30), 3)
        results = _race(spark, path, [mine, theirs])
        if results != [None, None]:
            break
    table_path = path
    failed = [r for r in results if r is not None]
    assert len(failed) == 1, results
    message = str(failed[0])
    assert "CommitConflictError" in message and "safe to retry" in message
    winner = [mine, theirs][results.index(None)]
    ours = HudiTable(table_path).to_arrow()
    assert rows(ours, COLUMNS) == rows(winner, COLUMNS)
    assert_same_rows(ours, hudi_rs(table_path), COLUMNS)
    assert_clean(table_path)


def test_writers_on_disjoint_partitions_both_commit(spark, table_path):
    save(spark.createDataFrame(data(range(30), 1)).repartition(2), table_path)
    a, b = data(range(100, 130), 2, ("a",)), data(range(200, 230), 2, ("b",))
    assert _race(spark, table_path, [a, b]) == [None, None]
    ours = HudiTable(table_path).to_arrow()
    assert ours.num_rows == 90
    assert_same_rows(ours, hudi_rs(table_path), COLUMNS)
    assert rows(spark.read.format("hudi-py").load(table_path).toArrow(), COLUMNS) == rows(ours, COLUMNS)
    assert_clean(table_path)


def test_retried_tasks_take_over_their_claims(tmp_path):
    """Real task retries (master local[2,3], in a subprocess): each write's first data file fails its task once,
    after the task claimed its buckets; Spark's retry of the task (same partition id) owns those claims. Every
    bucket gets a base file, the failed attempts' files are gone, and the rows are right."""
    import subprocess
    import sys
    from pathlib import Path

    import retry_job

    from hudi_ds.cli.validate import validate
    from hudi_ds.files.naming import parse_base_file, parse_log_file

    job = Path(retry_job.__file__)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    proc = subprocess.run([sys.executable, str(job), str(tmp_path)], env=env, capture_output=True, text=True,
                          timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    want: dict[str, tuple] = {}
    for ids, ts, _ in retry_job.WRITES:
        for r in retry_job.data(ids, ts).to_pylist():
            want[r["id"]] = (r["id"], r["ts"], r["v"], r["dt"])
    for table_type in ("MERGE_ON_READ", "COPY_ON_WRITE"):
        path = str(tmp_path / table_type)
        for step in range(len(retry_job.WRITES)):  # the fault fired (and the write still succeeded)
            assert (tmp_path / f"fail-{table_type}-{step}" / "injected_failure").exists()
        ours = HudiTable(path).to_arrow()
        assert rows(ours, COLUMNS) == sorted(want.values(), key=repr)
        assert_same_rows(ours, hudi_rs(path), COLUMNS)
        report = validate(path)
        assert report["ok"], report["errors"]
        assert_clean(path)
        groups, based = set(), set()
        for rel in data_files(path):
            partition, _, name = rel.rpartition("/")
            base, log = parse_base_file(partition, name), parse_log_file(partition, name)
            if base is not None:
                based.add((partition, base.file_id))
            if log is not None:
                groups.add((partition, log.file_id))
        assert groups <= based and len(based) == 8  # no log-only file slice
