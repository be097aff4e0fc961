"""A Spark batch write into a copy of a table Apache Hudi 1.1 wrote with two secondary indexes (`CREATE INDEX`):
upserts changing an indexed value across several tasks, and a delete; `hudi-py validate` (its secondary-index,
record-index, statistics and listing checks) passes after each and hudi-rs reads the rows our reader does."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pytest
from tables import REFERENCE_DIR, hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate

pytestmark = [pytest.mark.spark]


def test_spark_writes_keep_hudis_secondary_indexes_in_step(spark, tmp_path):
    path = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / "cow_v9_txns_simple_meta", path, copy_function=shutil.copyfile)
    held = HudiTable(str(path)).to_arrow()
    data = held.drop_columns([c for c in held.column_names if c.startswith("_hoodie_")])
    changed = data.slice(0, 4)
    changed = changed.set_column(changed.schema.get_field_index("merchant_name"), "merchant_name",
                                 pa.array(["Spark $ one", "Spark two", None, "Spark four"]))
    changed = changed.set_column(changed.schema.get_field_index("txn_ts"), "txn_ts",
                                 pa.compute.add(changed["txn_ts"], 10**6))
    spark.createDataFrame(changed.to_pandas()).repartition(2, "region").write.format("hudi-py") \
        .mode("append").save(str(path))
    report = validate(str(path))
    assert report["ok"], report["errors"][:3]
    spark.createDataFrame(data.slice(5, 1).to_pandas()).write.format("hudi-py") \
        .option("hoodie.datasource.write.operation", "delete").mode("append").save(str(path))
    report = validate(str(path))
    assert report["ok"], report["errors"][:3]
    columns = data.column_names
    ours = HudiTable(str(path)).to_arrow()
    assert rows(ours, columns) == rows(hudi_rs(str(path)), columns)
    assert "Spark $ one" in ours["merchant_name"].to_pylist() and ours.num_rows == held.num_rows - 1
