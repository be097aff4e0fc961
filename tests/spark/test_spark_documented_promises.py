"""Spark's side of tests/test_documented_promises.py: a first write that deletes records no schema, and the
first rows written set it."""

from __future__ import annotations

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark]

OPTS = {"hoodie.table.name": "first_delete", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt"}


def test_a_first_write_that_deletes_records_no_schema(spark, table_path):
    keys = pa.table({"id": ["a"], "dt": ["d1"]})  # no ordering column: Hudi's natural delete
    spark.createDataFrame(keys).coalesce(1).write.format("hudi-py").options(**OPTS) \
        .option("hoodie.datasource.write.operation", "delete").mode("append").save(table_path)
    t = HudiTable(table_path)
    timeline = t.load_timeline()
    assert "schema" not in timeline.commit_metadata(timeline.commits()[-1]).extra_metadata
    data = pa.table({"v": ["x"], "ts": [1], "id": ["a"], "dt": ["d1"]})
    spark.createDataFrame(data).coalesce(1).write.format("hudi-py").options(**OPTS).mode("append").save(table_path)
    assert HudiTable(table_path).schema.names == ["v", "ts", "id", "dt"]
    ours = spark.read.format("hudi-py").load(table_path).toArrow()
    assert rows(ours, ["id", "ts", "v"]) == rows(hudi_rs(table_path), ["id", "ts", "v"]) == [("a", 1, "x")]
