"""Spark writes and reads tables in S3 (moto's S3 server): credentials as data source options in the shared
session, and a streaming sink killed and restarted. (Credentials only as spark.hadoop.fs.s3a.* settings on a
multi-process cluster whose executors share no disk: tests/spark/test_spark_cluster.py.)"""

from __future__ import annotations

import io
import os
import subprocess
import sys
from contextlib import redirect_stdout
from pathlib import Path

import pyarrow as pa
import pytest
from s3_server import SECRET
from tables import hudi_rs, rows

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark]

OPTS = {"hoodie.table.name": "trips", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
        "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.bucket.index.num.buckets": "2"}
COLS = ["id", "ts", "v", "dt"]


def batch(lo: int, hi: int, ts: int) -> pa.Table:
    ids = range(lo, hi)
    return pa.table({"id": [f"k{i:04d}" for i in ids], "ts": [ts] * len(ids), "v": [i * ts for i in ids],
                     "dt": [f"2024-01-0{i % 3 + 1}" for i in ids]})


def test_spark_writes_and_reads_s3a_with_credentials_as_options(spark, s3):
    uri, creds = f"s3a://{s3.new_bucket()}/lake/trips", s3.options()
    for lo, hi, ts in ((0, 300, 1), (200, 500, 2)):
        spark.createDataFrame(batch(lo, hi, ts)).repartition(2).write.format("hudi-py").options(**OPTS, **creds) \
            .mode("append").save(uri)
    expected = rows(pa.concat_tables([batch(0, 200, 1), batch(200, 500, 2)]), COLS)
    df = spark.read.format("hudi-py").options(**creds).load(uri)
    assert sorted(tuple(r[c] for c in COLS) for r in df.collect()) == expected
    assert rows(HudiTable(uri, storage_options=creds).to_arrow(), COLS) == expected
    assert rows(hudi_rs(uri.replace("s3a://", "s3://"), storage_options=creds), COLS) == expected
    plan = io.StringIO()
    with redirect_stdout(plan):
        df.filter("dt = '2024-01-02'").explain(True)
    assert SECRET not in plan.getvalue()


def test_streaming_reader_reads_from_s3(spark, s3, tmp_path):
    uri, creds = f"s3a://{s3.new_bucket()}/lake/feed", s3.options()
    t = HudiTable.create(uri, table_name="feed", record_key="id", ordering_field="ts", partition_by="dt", buckets=2,
                         storage_options=creds)
    t.write(batch(0, 50, 1))
    t.write(batch(25, 75, 2))
    query = (spark.readStream.format("hudi-py").options(**creds).load(uri).writeStream.format("memory")
             .queryName("s3_feed").option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True)
             .start())
    query.awaitTermination(120)
    got = spark.sql("select id, ts, v, dt from s3_feed").collect()
    assert len({r["id"] for r in got}) == 75 and sum(r["ts"] == 2 for r in got) == 50


@pytest.mark.slow
def test_streaming_sink_to_s3a_survives_sigkills(s3, tmp_path, monkeypatch):
    """The crash test of the streaming sink, on S3: credentials from the environment, 3 SIGKILLs (1 in CI) at
    random moments, restarts from the checkpoint; the table ends exactly as the model."""
    import random
    import time

    here = Path(__file__).resolve().parents[1] / "streaming_job"
    sys.path.insert(0, str(here))
    from jobs import kill_group
    from source_data import batches, model, write_files

    from hudi_ds.cli.validate import validate

    for key, value in s3.options().items():
        monkeypatch.setenv(key, value)
    uri = f"s3a://{s3.new_bucket()}/lake/stream"
    data = batches(12 if os.environ.get("CI") == "true" else 24, 40, keys=200)  # a micro-batch on S3: seconds
    write_files(tmp_path / "src", data)
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    cmd = [sys.executable, str(here / "run_stream.py"), str(tmp_path / "src"), uri, str(tmp_path / "ck"),
           "--until-files", str(len(data)), "--compaction-every", "3"]
    rng = random.Random(3)
    for _ in range(1 if os.environ.get("CI") == "true" else 3):  # each restart costs a Spark start
        with open(tmp_path / "job.log", "ab") as log:
            proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=log, start_new_session=True)
        time.sleep(rng.uniform(9.0, 13.0))
        assert proc.poll() is None, (tmp_path / "job.log").read_text()[-3000:]
        kill_group(proc)
    with open(tmp_path / "job.log", "ab") as log:
        code = subprocess.run(cmd, env=env, stdout=log, stderr=log, timeout=300).returncode
    assert code == 0, (tmp_path / "job.log").read_text()[-3000:]
    table = HudiTable(uri)
    got = table.to_arrow(columns=["id", "ts", "amount"]).to_pylist()
    assert len(got) == len({r["id"] for r in got}), "duplicate record keys"
    expected = {k: list(v) for k, v in model(data).items()}
    assert {r["id"]: [r["ts"], r["amount"]] for r in got} == expected
    theirs = hudi_rs(uri.replace("s3a://", "s3://"), storage_options=s3.options()).to_pylist()
    assert {r["id"]: [r["ts"], r["amount"]] for r in theirs} == expected
    report = validate(table)
    assert report["ok"], report["errors"]
