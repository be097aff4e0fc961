"""A class-data archive (Java's AppCDS) for the Spark JVMs the tests start.

A Spark driver loads and verifies ~10,000 classes at every start; the suite starts dozens of drivers (the shared
session of each worker, every kill-and-restart job). Mapped from an archive, those classes cost nothing to load:
a small Spark job took 13.6-14.3 CPU-s of its JVM without one and 6.5-6.9 with one (two alternating runs each, on
two busy cores). The archive is made once per environment by a short job run with `-XX:ArchiveClassesAtExit`
(`python tests/spark_class_archive.py ARCHIVE`), then named to every driver through PYSPARK_SUBMIT_ARGS
(`--driver-java-options`: the driver only; the launcher JVM has another class path, and an archive made for one
class path is refused by any other). A JVM that cannot use it (another JDK, a damaged file) starts as if it
were absent, so the archive can only make starts faster, never change what runs.
"""

from __future__ import annotations

import fcntl
import hashlib
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path


def archive_path() -> Path | None:
    """Where this environment's archive lives: beside the interpreter's venv, named by what it depends on
    (pyspark's jars and the JDK); None without pyspark or java."""
    java = shutil.which("java")
    try:
        import pyspark
    except ImportError:
        return None
    if java is None:
        return None
    jars = Path(pyspark.__file__).parent / "jars"
    key = f"{pyspark.__version__}|{jars}|{os.path.realpath(java)}|{os.environ.get('JAVA_HOME', '')}"
    return Path(sys.prefix) / f"spark-classes-{hashlib.sha1(key.encode()).hexdigest()[:12]}.jsa"


def ensure_archive() -> Path | None:
    """The archive, made now if it is missing (about a minute of CPU); None when it cannot be made (the tests then
    run without it)."""
    path = archive_path()
    if path is None:
        return None
    with open(path.with_suffix(".lock"), "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)  # one process makes it, the others wait and take it
        return path if path.exists() else _make(path)


def _make(path: Path) -> Path | None:
    partial = path.with_suffix(f".{os.getpid()}.partial")
    env = dict(os.environ, PYSPARK_SUBMIT_ARGS=f'--driver-java-options "-XX:ArchiveClassesAtExit={partial}" '
                                               "pyspark-shell")
    with tempfile.TemporaryFile() as log:
        done = subprocess.run([sys.executable, __file__], env=env, stdout=log, stderr=log, timeout=600)
    if done.returncode != 0 or not partial.exists():
        partial.unlink(missing_ok=True)
        print(f"note: no class-data archive for the Spark JVMs (exit {done.returncode}); the tests run without it",
              file=sys.stderr)
        return None
    partial.replace(path)
    return path


def use_archive(path: Path) -> None:
    """Name the archive to every Spark driver this process and its children start."""
    os.environ["PYSPARK_SUBMIT_ARGS"] = f'--driver-java-options "-XX:SharedArchiveFile={path}" pyspark-shell'


def _training_job() -> None:
    """What the tests' drivers do, in small: hudi-py's batch write and read, a streaming query, Spark's parquet."""
    sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
    from hudi_ds.spark import session

    spark = session(master="local[2]", app_name="class-archive", **{"spark.ui.enabled": "false",
                                                                   "spark.sql.shuffle.partitions": "2"})
    with tempfile.TemporaryDirectory() as tmp:
        df = spark.range(200).selectExpr("cast(id as string) as id", "id as ts", "cast(id % 3 as string) as p")
        options = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
                   "hoodie.datasource.write.precombine.field": "ts",
                   "hoodie.datasource.write.partitionpath.field": "p"}
        df.write.format("hudi-py").options(**options).mode("overwrite").save(f"{tmp}/t")
        spark.read.format("hudi-py").load(f"{tmp}/t").filter("ts > 5").count()
        df.write.parquet(f"{tmp}/src")
        query = (spark.readStream.schema(df.schema).parquet(f"{tmp}/src").writeStream.format("hudi-py")
                 .options(**options).option("checkpointLocation", f"{tmp}/ck").trigger(availableNow=True)
                 .start(f"{tmp}/s"))
        query.awaitTermination()
        spark.read.parquet(f"{tmp}/src").groupBy("p").count().collect()
    jvm = spark.sparkContext._gateway.proc
    spark.stop()
    # the JVM writes the archive as it exits, which it does when its stdin closes: wait for it, or the caller
    # would take a file still being written
    jvm.stdin.close()
    jvm.wait(timeout=300)


if __name__ == "__main__":
    _training_job()
