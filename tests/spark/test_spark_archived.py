"""Spark reads that reach back past the active timeline: a batch incremental read over archived commits, and a
streaming source resuming from a checkpoint older than the active timeline."""

from __future__ import annotations

import pyarrow as pa

from hudi_ds import HudiTable

ARCHIVE_OFTEN = {"hoodie.keep.min.commits": 2, "hoodie.keep.max.commits": 3, "hoodie.cleaner.commits.retained": 1}


def _table(path: str) -> HudiTable:
    return HudiTable.create(path, table_name="a", record_key="id", ordering_field="ts", partition_by="p",
                            buckets=1, options=ARCHIVE_OFTEN)


def _write(t: HudiTable, n: int) -> str:
    """Commit n adds its own keys in its own partition (nothing is ever cleaned)."""
    return t.write(pa.table({"id": [f"k{n}a", f"k{n}b"], "ts": [n, n], "p": [str(n), str(n)],
                             "v": [float(n), float(n)]}))


def test_batch_incremental_read_over_archived_commits(spark, tmp_path):
    path = str(tmp_path / "a")
    t = _table(path)
    commits = [_write(t, n) for n in range(8)]
    assert t.load_timeline().find(commits[1]) is None  # archived
    df = (spark.read.format("hudi-py").option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.read.begin.instanttime", commits[0])
          .option("hoodie.datasource.read.end.instanttime", commits[5]).load(path))
    assert sorted(r["id"] for r in df.collect()) == sorted(f"k{n}{s}" for n in range(1, 6) for s in "ab")
    feed = (spark.read.format("hudi-py").option("hoodie.datasource.query.type", "incremental")
            .option("hoodie.datasource.query.incremental.format", "cdc")
            .option("hoodie.datasource.read.begin.instanttime", commits[0])
            .option("hoodie.datasource.read.end.instanttime", commits[5]).load(path))
    assert sorted((r["_change_type"], r["id"]) for r in feed.collect()) == sorted(
        ("insert", f"k{n}{s}") for n in range(1, 6) for s in "ab")
    travel = spark.read.format("hudi-py").option("as.of.instant", commits[2]).load(path)
    assert sorted(r["id"] for r in travel.collect()) == sorted(f"k{n}{s}" for n in range(3) for s in "ab")


def test_stream_resumes_from_a_checkpoint_older_than_the_active_timeline(spark, tmp_path):
    path, checkpoint = str(tmp_path / "a"), str(tmp_path / "ck")
    t = _table(path)
    _write(t, 0)
    _write(t, 1)

    def run(batch: str) -> list[str]:
        """Run the stream from the checkpoint to the end; the ids it delivered in this run."""
        out = str(tmp_path / "out" / batch)
        stream = spark.readStream.format("hudi-py").option("hoodie.datasource.read.streaming.max.instants", "2")
        query = (stream.load(path).select("id").writeStream
                 .foreachBatch(lambda df, _: df.write.mode("append").parquet(out))
                 .option("checkpointLocation", checkpoint).trigger(availableNow=True).start())
        query.awaitTermination(180)
        query.stop()
        return [r["id"] for r in spark.read.parquet(out).collect()]

    assert sorted(run("a")) == ["k0a", "k0b", "k1a", "k1b"]
    later = [_write(t, n) for n in range(2, 9)]
    assert t.load_timeline().find(later[0]) is None  # the next commit the stream needs is archived
    assert sorted(run("b")) == sorted(f"k{n}{s}" for n in range(2, 9) for s in "ab")
