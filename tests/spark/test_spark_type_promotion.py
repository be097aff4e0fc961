"""A Spark batch write into a table whose epoch partition column Hudi's SQL UPDATE left as text: a source's long
instants are formatted by the timestamp key generator and stored as the table's text (tests/test_type_promotion.py
has the same through HudiTable.write)."""

from __future__ import annotations

import shutil
from typing import Any

import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate

pytestmark = [pytest.mark.spark]

EPOCH = "cow_v9_timebasedkeygen_epochmillis"


def test_spark_writes_long_instants_into_an_epoch_column_stored_as_text(spark, reference_dir, tmp_path):
    from pyspark.sql import functions as F

    path = str(tmp_path / EPOCH)
    shutil.copytree(reference_dir / EPOCH, path)
    before = HudiTable(path).to_arrow()
    data_columns = [c for c in before.column_names if not c.startswith("_hoodie")]
    by_key = {r["txn_id"]: r for r in before.to_pylist()}
    group = by_key["TXN-002"]["_hoodie_file_name"].split("_")[0]
    read = spark.read.format("hudi-py").load(path).select(*data_columns)
    held = spark.createDataFrame(read.collect(), read.schema)  # not read lazily from the table being written
    as_long = F.col("ts_millis").cast("long")
    update = (held.filter("txn_id = 'TXN-002'").withColumn("txn_ts", F.col("txn_ts") + 1)
              .withColumn("txn_type", F.lit("refund")).withColumn("ts_millis", as_long))
    fresh = update.withColumn("txn_id", F.lit("TXN-100")).withColumn(
        "ts_millis", F.lit(int(by_key["TXN-003"]["ts_millis"])).cast("long"))
    assert dict(update.dtypes)["ts_millis"] == "bigint"
    update.unionByName(fresh).write.format("hudi-py").mode("append").save(path)
    (held.filter("txn_id = 'TXN-005'").select("txn_id", "txn_ts", as_long.alias("ts_millis")).write
     .format("hudi-py").option("hoodie.datasource.write.operation", "delete").mode("append").save(path))

    after = HudiTable(path).to_arrow()
    got = {r["txn_id"]: r for r in after.to_pylist()}
    assert got["TXN-002"]["_hoodie_file_name"].split("_")[0] == group
    assert got["TXN-100"]["_hoodie_partition_path"] == by_key["TXN-003"]["_hoodie_partition_path"]
    assert "TXN-005" not in got
    changed: dict[str, Any] = {c: by_key["TXN-002"][c] for c in data_columns}
    changed.update(txn_ts=changed["txn_ts"] + 1, txn_type="refund")
    expected = [{c: r[c] for c in data_columns} for r in before.to_pylist() if r["txn_id"] not in ("TXN-002", "TXN-005")]
    expected += [changed, {**changed, "txn_id": "TXN-100", "ts_millis": by_key["TXN-003"]["ts_millis"]}]
    want = sorted((tuple(r[c] for c in data_columns) for r in expected), key=repr)
    assert rows(after, data_columns) == want == rows(hudi_rs(path), data_columns)
    report = validate(path)
    assert report["ok"], report["errors"]
