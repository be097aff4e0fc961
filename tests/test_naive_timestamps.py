"""Timestamps without a time zone are stored as Apache Hudi stores Spark's TimestampNTZ (Avro local-timestamp-*,
parquet isAdjustedToUTC=false), and hudi-rs 0.5's panic on such tables is the one docs/compatibility.md quotes."""

from __future__ import annotations

import datetime as dt
import json
import re
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import hudi_rs

from hudi_ds import HudiTable

DOCS = Path(__file__).resolve().parent.parent / "docs" / "compatibility.md"
WHEN = [dt.datetime(2024, 1, 1, 12, 30, 0, 123456), dt.datetime(1969, 12, 31, 23, 59, 59)]


def _data(ts: int) -> pa.Table:
    return pa.table({
        "id": ["a", "b"], "ts": [ts, ts],
        "at": pa.array(WHEN, pa.timestamp("us")),
        "at_ms": pa.array([w.replace(microsecond=w.microsecond // 1000 * 1000) for w in WHEN], pa.timestamp("ms")),
        "utc": pa.array(WHEN, pa.timestamp("us", tz="UTC")),
    })


def _table(path: Path, table_type: str) -> HudiTable:
    t = HudiTable.create(str(path), table_name="ntz", record_key="id", ordering_field="ts", table_type=table_type,
                         buckets=1, options={"hoodie.logfile.data.block.format": "avro"})
    t.write(_data(1))
    return t


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_naive_timestamps_are_stored_as_hudi_stores_timestamp_ntz(tmp_path, table_type):
    t = _table(tmp_path / "t", table_type)
    t.write(_data(2))  # merge-on-read: an Avro log block of the same schema
    timeline = t.load_timeline()
    avro = json.loads(timeline.commit_metadata(timeline.commits()[-1]).extra_metadata["schema"])
    logical = {f["name"]: f["type"][1]["logicalType"] for f in avro["fields"] if f["name"] in ("at", "at_ms", "utc")}
    assert logical == {"at": "local-timestamp-micros", "at_ms": "local-timestamp-millis", "utc": "timestamp-micros"}
    base = next(Path(t.path).glob("*.parquet"))
    schema = pq.ParquetFile(base).schema
    adjusted = {schema.column(i).name: json.loads(schema.column(i).logical_type.to_json())["isAdjustedToUTC"]
                for i in range(len(schema)) if schema.column(i).name in logical}
    assert adjusted == {"at": False, "at_ms": False, "utc": True}
    got = t.to_arrow(columns=["id", "ts", "at", "at_ms", "utc"]).sort_by("id")
    assert got.equals(_data(2))


def test_hudi_rs_panics_on_them_as_the_compatibility_doc_says(tmp_path, capfd):
    t = _table(tmp_path / "t", "COPY_ON_WRITE")
    with pytest.raises(BaseException) as err:  # noqa: PT011 - a pyo3 PanicException is only a BaseException
        hudi_rs(t.path)
    assert type(err.value).__name__ == "PanicException"
    where = re.search(r"panicked at (\S+):\n", capfd.readouterr().err)
    assert where is not None
    doc = DOCS.read_text()
    assert f"panicked at {where.group(1)}:\n{err.value}" in doc, "docs/compatibility.md quotes another hudi-rs panic"
