"""A real multi-process cluster (local-cluster: separate executor JVMs and Python workers) in a subprocess.

Nothing may rely on state shared inside one process: the writer is pickled to executors in other JVMs, the
commit runs in yet another driver-side Python process. The script first uses a plain SparkSession (no register()):
format("hudi-py") must be found by pyspark's auto-registration of `pyspark_*` modules. Then, in the same cluster
(a cluster start costs a minute on two busy cores), it writes a table in S3 (moto's server) with the credentials
only as the session's spark.hadoop.fs.s3a.* settings, which register() carries to the source: the executors share
no disk, so nothing of that table may land on local disk.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest
from s3_server import SECRET

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.slow]

SCRIPT = textwrap.dedent('''
    import sys
    import pyarrow as pa
    from pyspark.sql import SparkSession

    path, uri, endpoint, key, secret = sys.argv[1:6]
    spark = (SparkSession.builder.master("local-cluster[2,1,1024]").appName("hudi-py-cluster")
             .config("spark.sql.session.timeZone", "UTC")
             .config("spark.sql.python.filterPushdown.enabled", "true")
             .config("spark.ui.enabled", "false")
             .config("spark.sql.shuffle.partitions", "4")
             .config("spark.executor.memory", "768m")
             .config("spark.hadoop.fs.s3a.endpoint", endpoint)
             .config("spark.hadoop.fs.s3a.access.key", key)
             .config("spark.hadoop.fs.s3a.secret.key", secret)
             .config("spark.hadoop.fs.s3a.endpoint.region", "us-east-1")
             .config("spark.hadoop.fs.s3a.path.style.access", "true")
             .config("spark.hadoop.fs.s3a.connection.ssl.enabled", "false")
             .getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    from hudi_ds import HudiTable
    from hudi_ds.spark import cluster_by_bucket

    opts = {"hoodie.table.name": "cluster_t", "hoodie.datasource.write.recordkey.field": "id",
            "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.datasource.write.table.type": "MERGE_ON_READ", "hoodie.bucket.index.num.buckets": "4"}

    def batch(lo, hi, ts):
        ids = range(lo, hi)
        return pa.table({"id": [f"k{i:05d}" for i in ids], "ts": [ts] * len(ids),
                         "v": [i * ts for i in ids], "dt": [f"2024-01-0{i % 3 + 1}" for i in ids]})

    spark.createDataFrame(batch(0, 3000, 1)).repartition(4).write.format("hudi-py").options(**opts) \\
        .mode("append").save(path)
    df = cluster_by_bucket(spark.createDataFrame(batch(2000, 5000, 2)), opts, num_partitions=4)
    df.write.format("hudi-py").options(**opts).mode("append").save(path)

    got = spark.read.format("hudi-py").option("hoodie.datasource.read.split.max.bytes", "1").load(path)
    assert got.rdd.getNumPartitions() == 12, got.rdd.getNumPartitions()
    rows = sorted((r["id"], r["ts"], r["v"], r["dt"]) for r in got.collect())
    expected = sorted([(f"k{i:05d}", 1, i, f"2024-01-0{i % 3 + 1}") for i in range(2000)]
                      + [(f"k{i:05d}", 2, 2 * i, f"2024-01-0{i % 3 + 1}") for i in range(2000, 5000)])
    assert rows == expected, (len(rows), len(expected))
    core = HudiTable(path).to_arrow()
    assert sorted(zip(core["id"].to_pylist(), core["ts"].to_pylist(), core["v"].to_pylist(),
                      core["dt"].to_pylist())) == expected
    assert got.filter("dt = '2024-01-02'").count() == sum(1 for r in expected if r[3] == "2024-01-02")

    # copy-on-write, not clustered: every bucket's rows come from several tasks in other JVMs; the commit
    # process merges them into one base file per file group
    cow, cow_opts = path + "_cow", {**opts, "hoodie.datasource.write.table.type": "COPY_ON_WRITE"}
    for lo, hi, ts in ((0, 3000, 1), (2000, 5000, 2)):
        spark.createDataFrame(batch(lo, hi, ts)).repartition(3).write.format("hudi-py").options(**cow_opts) \
            .mode("append").save(cow)
    core = HudiTable(cow).to_arrow()
    assert sorted(zip(core["id"].to_pylist(), core["ts"].to_pylist(), core["v"].to_pylist(),
                      core["dt"].to_pylist())) == expected
    assert len(core["_hoodie_file_name"].unique()) == 12

    from hudi_ds.spark import register

    register(spark)  # carries the session's S3A settings to the source
    for lo, hi, ts in ((0, 3000, 1), (2000, 5000, 2)):
        spark.createDataFrame(batch(lo, hi, ts)).repartition(4).write.format("hudi-py").options(**opts) \
            .mode("append").save(uri)
    in_s3 = sorted((r["id"], r["ts"], r["v"], r["dt"]) for r in spark.read.format("hudi-py").load(uri).collect())
    assert in_s3 == expected, (len(in_s3), len(expected))
    executors = spark.sparkContext._jsc.sc().getExecutorMemoryStatus().size()
    print("CLUSTER-OK", len(rows), len(in_s3), "executors", executors - 1)
    spark.stop()
''')


def test_local_cluster_writes_local_disk_and_s3a(tmp_path, s3):
    import pyspark

    bucket = s3.new_bucket()
    uri = f"s3a://{bucket}/lake/trips"
    script = tmp_path / "cluster_job.py"
    script.write_text(SCRIPT)
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_", "AWS_"))}
    env.update(SPARK_HOME=str(Path(pyspark.__file__).parent), PYSPARK_PYTHON=sys.executable,
               PYSPARK_DRIVER_PYTHON=sys.executable)
    endpoint = s3.endpoint.removeprefix("http://")  # S3A takes a host; ssl.enabled=false picks http
    creds = s3.options()
    work = tmp_path / "work"
    work.mkdir()
    proc = subprocess.run([sys.executable, str(script), str(tmp_path / "table"), uri, endpoint,
                           creds["AWS_ACCESS_KEY_ID"], SECRET], env=env, cwd=str(work), capture_output=True,
                          text=True, timeout=360)
    tail = (proc.stdout + proc.stderr)[-4000:]
    assert proc.returncode == 0, tail
    assert "CLUSTER-OK 5000 5000 executors 2" in proc.stdout, tail
    assert SECRET not in proc.stdout + proc.stderr
    # the executors wrote nothing of the S3 table on local disk: all of it is in the bucket
    assert not [p for p in work.rglob("*") if ".hoodie" in p.parts or p.suffix in (".parquet",) or ".log." in p.name]
    keys = s3.keys(bucket)
    assert any(k.endswith(".deltacommit") for k in keys) and any(".log." in k or k.endswith(".parquet") for k in keys)
    assert len(HudiTable(uri.replace("s3a://", "s3://"), storage_options=creds).to_arrow()) == 5000
