"""spark.readStream.format("hudi-py"): reference tables read as change streams, a pipeline copying one
table into another through the sink, and the cleaned-instants error with its fallback."""

from __future__ import annotations

import json
import time
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate

CDC = {"hoodie.datasource.query.incremental.format": "cdc"}


def _collect(spark, path: str, options: dict[str, str], tmp: Path, name: str) -> list[dict]:
    """Run a stream to the end (Trigger.AvailableNow) into a memory table; its rows as dicts."""
    reader = spark.readStream.format("hudi-py").options(**options).load(path)
    query = (reader.writeStream.format("memory").queryName(name).option("checkpointLocation", str(tmp / name))
             .trigger(availableNow=True).start())
    query.awaitTermination(180)
    rows = [r.asDict(recursive=True) for r in spark.sql(f"select * from {name}").collect()]
    query.stop()
    return rows


def _replay(rows: list[dict]) -> dict[tuple[str, str], dict]:
    state: dict[tuple[str, str], dict] = {}
    for r in sorted(rows, key=lambda r: (r["_commit_time"], r["_change_type"] != "update_preimage")):
        ident = (r["_hoodie_partition_path"], r["_hoodie_record_key"])
        if r["_change_type"] in ("insert", "update_postimage"):
            state[ident] = r
        elif r["_change_type"] == "delete":
            state.pop(ident, None)
    return state


REF_TABLES = ["quickstart_mor_avro_v6_trips_8i3d", "quickstart_mor_avro_v8_trips_8i3u1d",
              "mor_avro_v9_txns_simple_meta", "cow_v9_txns_simple_meta", "mor_parquet_v6_simplekeygen_nonhivestyle"]


@pytest.mark.parametrize("name", REF_TABLES)
def test_reference_table_as_change_stream_ends_as_its_snapshot(spark, reference_dir, tmp_path, name):
    path = str(reference_dir / name)
    rows = _collect(spark, path, {**CDC, "hoodie.datasource.read.streaming.max.instants": "1"}, tmp_path,
                    f"ref_{name}")
    state = _replay(rows)
    snapshot = HudiTable(path).to_arrow().to_pylist()
    assert sorted(state) == sorted((r["_hoodie_partition_path"], r["_hoodie_record_key"]) for r in snapshot)


def test_latest_state_stream_from_earliest_and_latest(spark, tmp_path):
    path = str(tmp_path / "a")
    t = HudiTable.create(path, table_name="a", record_key="id", ordering_field="ts", partition_by="p")
    t.write(pa.table({"id": ["x", "y"], "ts": [1, 1], "p": ["1", "2"], "v": [1.0, 2.0]}))
    t.write(pa.table({"id": ["x", "z"], "ts": [2, 1], "p": ["1", "1"], "v": [10.0, 3.0]}))
    rows = _collect(spark, path, {"hoodie.datasource.read.streaming.max.instants": "1"}, tmp_path, "latest_a")
    seen = sorted((r["id"], r["v"]) for r in rows)
    assert seen == [("x", 1.0), ("x", 10.0), ("y", 2.0), ("z", 3.0)]
    none = _collect(spark, path, {"read.start-commit": "latest"}, tmp_path, "latest_b")
    assert none == []


@pytest.mark.parametrize("version", [6, 9])
def test_pipeline_copies_a_table_through_the_change_feed(spark, tmp_path, version):
    """The streaming source reads table A's change feed into the streaming sink writing table B (both at the
    table version under test: timeline layout 2 and completion-time order on version 9)."""
    src, dst = str(tmp_path / "a"), str(tmp_path / "b")
    a = HudiTable.create(src, table_name="a", record_key="id", ordering_field="ts", partition_by="p", buckets=2,
                         options={"hoodie.write.table.version": str(version)})
    a.write(pa.table({"id": [f"k{i}" for i in range(20)], "ts": [1] * 20, "p": [str(i % 3) for i in range(20)],
                      "v": [float(i) for i in range(20)]}))
    feed = spark.readStream.format("hudi-py").options(**CDC).load(src)
    # all changes of a key reach one sink task; the sink applies them in _commit_time order
    query = (feed.repartition(2, "id").writeStream.format("hudi-py")
             .option("hoodie.table.name", "b").option("hoodie.datasource.write.recordkey.field", "id")
             .option("hoodie.datasource.write.precombine.field", "ts")
             .option("hoodie.datasource.write.partitionpath.field", "p")
             .option("hoodie.datasource.write.changelog.column", "_change_type")
             .option("hoodie.write.table.version", str(version))
             .option("checkpointLocation", str(tmp_path / "ck")).trigger(processingTime="300 milliseconds")
             .start(dst))
    try:
        for step in range(2, 6):  # the writer keeps changing A while the pipeline runs
            ids = [f"k{i}" for i in range(step, 20, 3)]
            a.write(pa.table({"id": ids, "ts": [step] * len(ids), "p": [str(int(i[1:]) % 3) for i in ids],
                              "v": [float(step)] * len(ids)}))
            gone = [f"k{step * 3}"]
            a.write(pa.table({"id": gone, "p": [str(step * 3 % 3)]}), operation="delete")
            time.sleep(0.5)
        query.processAllAvailable()
    finally:
        query.stop()
    cols = ["id", "ts", "p", "v"]
    want = sorted(tuple(r[c] for c in cols) for r in a.to_arrow(columns=cols).to_pylist())
    got = sorted(tuple(r[c] for c in cols) for r in HudiTable(dst).to_arrow(columns=cols).to_pylist())
    assert got == want
    assert HudiTable(dst).config.version == version == HudiTable(src).config.version
    # the streaming sink keeps the metadata table a version 9 table has by default
    assert HudiTable(dst).config.metadata_partitions == (["files"] if version >= 8 else [])
    assert validate(dst)["ok"]


def test_cleaned_instants_fail_with_the_option_to_change_and_fall_back(spark, tmp_path):
    path = str(tmp_path / "c")
    t = HudiTable.create(path, table_name="c", record_key="id", ordering_field="ts", buckets=1)
    t.write(pa.table({"id": ["a"], "ts": [1], "v": [1.0]}))
    first = t.timeline()[-1].requested_time
    for ts in range(2, 8):
        t.write(pa.table({"id": ["a", f"n{ts}"], "ts": [ts, ts], "v": [float(ts), 0.0]}))
        t.compact()
    assert t.clean(retain_commits=1)
    # one commit per batch: the first batch needs the table as of the second commit, whose files were cleaned
    one = {"read.start-commit": _after(first), "hoodie.datasource.read.streaming.max.instants": "1"}
    with pytest.raises(Exception) as info:
        _collect(spark, path, one, tmp_path, "cleaned_a")
    assert "clean.retain_commits" in str(info.value)
    assert "hoodie.datasource.read.incr.fallback.fulltablescan.enable" in str(info.value)
    rows = _collect(spark, path, {**one, "hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"},
                    tmp_path, "cleaned_b")
    assert sorted(r["id"] for r in rows) == sorted(r["id"] for r in t.to_arrow().to_pylist())


def _after(instant: str) -> str:
    """The instant time one millisecond later: a start position that skips `instant` itself."""
    return str(int(instant) + 1)


def test_change_feed_batch_query(spark, tmp_path):
    path = str(tmp_path / "f")
    t = HudiTable.create(path, table_name="f", record_key="id", ordering_field="ts")
    c1 = t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "v": [1.0, 2.0]}))
    t.write(pa.table({"id": ["a"], "ts": [2], "v": [5.0]}))
    t.write(pa.table({"id": ["b"]}), operation="delete")
    df = (spark.read.format("hudi-py").option("hoodie.datasource.query.type", "incremental")
          .option("hoodie.datasource.query.incremental.format", "cdc")
          .option("hoodie.datasource.read.begin.instanttime", c1).load(path))
    got = sorted((r["_change_type"], r["id"]) for r in df.collect())
    assert got == [("delete", "b"), ("update_postimage", "a"), ("update_preimage", "a")]
    assert json.dumps(got)
