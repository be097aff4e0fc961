"""The streaming source's planning over archived commits, driven without Spark (Spark's own runs are in
tests/spark/test_spark_archived.py): an offset older than the active timeline resumes over the archived commits;
a batch whose file versions were cleaned fails naming the options, or falls back to the latest snapshot."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ds import CleanedInstantsError, HudiTable
from hudi_ds.config.option_parsing import parse_options
from hudi_ds.spark.batch_reader import load_snapshot
from hudi_ds.spark.stream_reader import HudiStreamReader, stream_schema


def _reader(t: HudiTable, cdc: bool, **options: str) -> HudiStreamReader:
    opts = parse_options({"path": t.path, **options})
    return HudiStreamReader(opts, t.storage, cdc, stream_schema(load_snapshot(t.storage), cdc))


def _batch(reader: HudiStreamReader, start: str) -> pa.Table:
    end = reader.latestOffset({"instant": start}, None)
    tables = [pa.Table.from_batches(list(reader.read(p))) for p in reader.partitions({"instant": start}, end)]
    return pa.concat_tables([t for t in tables if t.num_rows]) if any(t.num_rows for t in tables) else pa.table({})


def _write(t: HudiTable, n: int) -> str:
    return t.write(pa.table({"id": [f"k{n}"], "ts": [n], "p": [str(n)], "v": [float(n)]}))


@pytest.mark.parametrize("cdc", [False, True])
def test_an_offset_older_than_the_active_timeline_resumes_over_archived_commits(tmp_path, cdc):
    t = HudiTable.create(str(tmp_path / "a"), table_name="a", record_key="id", ordering_field="ts", partition_by="p",
                         buckets=1, options={"hoodie.keep.min.commits": 2, "hoodie.keep.max.commits": 3,
                                                "hoodie.clean.commits.retained": 1, "hoodie.clean.automatic": "false"})
    consumed = [_write(t, n) for n in range(2)]
    later = [_write(t, n) for n in range(2, 9)]
    assert t.load_timeline().find(later[0]) is None  # the next commit a reader at `consumed[-1]` needs
    got = _batch(_reader(t, cdc), consumed[-1])
    assert sorted(got["id"].to_pylist()) == [f"k{n}" for n in range(2, 9)]
    if cdc:
        assert set(got["_change_type"].to_pylist()) == {"insert"}
        assert sorted(got["_commit_time"].to_pylist()) == later


@pytest.mark.parametrize("cdc", [False, True])
def test_a_cleaned_batch_fails_naming_the_options_or_falls_back(tmp_path, cdc):
    t = HudiTable.create(str(tmp_path / "c"), table_name="c", record_key="id", ordering_field="ts", partition_by="p",
                         buckets=1, options={"hoodie.clean.automatic": "false"})
    first = t.write(pa.table({"id": ["a"], "ts": [1], "p": ["x"], "v": [1.0]}))
    for n in range(2, 8):
        t.write(pa.table({"id": ["a", f"n{n}"], "ts": [n, n], "p": ["x", "x"], "v": [float(n), 0.0]}))
        t.compact()
    assert t.clean(retain_commits=1)
    one = {"hoodie.datasource.read.streaming.max.instants": "1"}
    with pytest.raises(CleanedInstantsError, match="clean.retain_commits") as info:
        _batch(_reader(t, cdc, **one), first)
    assert "hoodie.datasource.read.incr.fallback.fulltablescan.enable" in str(info.value)
    reader = _reader(t, cdc, **one, **{"hoodie.datasource.read.incr.fallback.fulltablescan.enable": "true"})
    got = _batch(reader, first).to_pylist()
    # the batch's commit wrote "a" and "n2"; the latest snapshot holds a later "a": the fallback reads "n2"
    assert [r["id"] for r in got] == ["n2"]
    written = {r["id"]: r["_hoodie_commit_time"] for r in t.to_arrow().to_pylist()}["n2"]
    if cdc:
        assert (got[0]["_change_type"], got[0]["_commit_time"]) == ("insert", written)
    else:
        assert got[0]["_hoodie_commit_time"] == written
