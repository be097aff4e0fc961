"""Virtual keys (hoodie.populate.meta.fields=false) through Spark: a batch write and read with format("hudi-py")
and the streaming sink, on copy-on-write tables; checked against a model, the core reader and hudi-rs."""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from model import DictModel
from tables import hudi_rs, rows
from test_spark_batch import COLUMNS, META, make, options, read, write

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark, pytest.mark.interop]

VIRTUAL = {"hoodie.populate.meta.fields": "false"}


def check(spark: Any, path: str, model: DictModel) -> None:
    """Every reader gives the model's rows; the keys Spark reads are computed from the key column, and the base
    files hold no meta value but the file name."""
    ours = read(spark, path)
    assert rows(ours, COLUMNS) == model.sorted_rows(COLUMNS) == rows(hudi_rs(path), COLUMNS)
    assert rows(ours, META + COLUMNS) == rows(HudiTable(path).to_arrow(), META + COLUMNS)
    assert ours["_hoodie_record_key"].to_pylist() == ours["id"].to_pylist()
    for f in Path(path).rglob("*.parquet"):
        if ".hoodie" not in f.parts:
            data = pq.read_table(f, columns=META[:4])
            assert all(data[c].null_count == data.num_rows for c in META[:4])


def test_batch_write_and_read(spark, table_path):
    """Insert, then an upsert and a delete spread unclustered over three tasks (groups shared between tasks)."""
    opts = options("COPY_ON_WRITE", **VIRTUAL)
    model = DictModel("id", "ts", "dt")
    first = make(list(range(0, 60)), 1)
    write(spark, first, table_path, opts, "bulk_insert", mode="overwrite")
    model.upsert(first.to_pylist())
    update = make(list(range(40, 90)), 2)
    write(spark, update, table_path, opts, "upsert", cluster=False, tasks=3)
    model.upsert(update.to_pylist())
    gone = make(list(range(0, 20, 3)), 3)
    write(spark, gone, table_path, opts, "delete", cluster=False, tasks=3)
    model.delete(gone.to_pylist())
    assert HudiTable(table_path).config.populate_meta_fields is False
    check(spark, table_path, model)


def test_streaming_sink(spark, tmp_path):
    """Micro-batches of upserts and changelog deletes into a new virtual-key table."""
    src, path = tmp_path / "src", str(tmp_path / "t")
    src.mkdir()
    batches = []
    for ts, ids in [(1, range(0, 40)), (2, range(20, 60))]:
        kinds = ["delete" if ts == 2 and i % 3 == 0 else "insert" for i in ids]
        batches.append(make(list(ids), ts).append_column("_change_type", pa.array(kinds)))
    for i, b in enumerate(batches):
        pq.write_table(b, src / f"{i:03d}.parquet")
        os.utime(src / f"{i:03d}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))  # Spark reads by mtime
    df = spark.readStream.schema(spark.createDataFrame(batches[0]).schema).option("maxFilesPerTrigger", 1) \
        .parquet(str(src))
    q = (df.repartition(2).writeStream.format("hudi-py").options(**options("COPY_ON_WRITE", **VIRTUAL))
         .option("hoodie.datasource.write.changelog.column", "_change_type")
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    model = DictModel("id", "ts", "dt")
    for b in batches:
        rs = b.to_pylist()
        model.upsert([r for r in rs if r["_change_type"] == "insert"])
        model.delete([r for r in rs if r["_change_type"] == "delete"])
    assert HudiTable(path).config.populate_meta_fields is False
    check(spark, path, model)
