"""Spark's delete_partition, as Apache Hudi's datasource takes it: `option("hoodie.datasource.write.operation",
"delete_partition")` with hoodie.datasource.write.partitions.to.delete (any DataFrame, an empty one included), or
the partitions of the DataFrame's rows across several tasks; refused with mode("overwrite") and on a missing table,
nothing written."""

from __future__ import annotations

from typing import Any

import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark]

SCHEMA = "id string, ts long, dt string, v string"
KEYS = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.partitionpath.field": "dt"}


def save(df: Any, path: str, mode: str = "append", **options: str) -> None:
    df.write.format("hudi-py").options(**KEYS, **options).mode(mode).save(path)


@pytest.mark.parametrize("table_type,index", [("MERGE_ON_READ", "BUCKET"), ("COPY_ON_WRITE", "SIMPLE")])
def test_spark_deletes_partitions_named_or_of_its_rows(spark, tmp_path, table_type, index):
    path = str(tmp_path / "t")
    data = [(f"k{i}", 1, f"d{i % 4}", f"v{i}") for i in range(40)]
    shape = {"hoodie.datasource.write.table.type": table_type, "hoodie.index.type": index}
    save(spark.createDataFrame(data, SCHEMA).repartition(3), path, **shape)

    save(spark.createDataFrame([], SCHEMA), path, **{"hoodie.datasource.write.operation": "delete_partition",
                                                     "hoodie.datasource.write.partitions.to.delete": "d0,d9"})
    save(spark.createDataFrame([("x", 0, "d1", ""), ("y", 0, "d1", ""), ("z", 0, "d2", "")], SCHEMA).repartition(2),
         path, **{"hoodie.datasource.write.operation": "delete_partition"})
    want = sorted((i, p, v) for i, _, p, v in data if p == "d3")
    got = rows(spark.read.format("hudi-py").load(path).toArrow(), ["id", "dt", "v"])
    assert got == want == rows(hudi_rs(path), ["id", "dt", "v"])
    inst = HudiTable(path).timeline()[-1]
    meta = HudiTable(path).load_timeline().commit_metadata(inst)
    assert inst.action == "replacecommit" and sorted(meta.replaced_file_ids()) == ["d1", "d2"]


def test_spark_refuses_delete_partition_it_cannot_do(spark, tmp_path):
    path = str(tmp_path / "t")
    delete = {"hoodie.datasource.write.operation": "delete_partition",
              "hoodie.datasource.write.partitions.to.delete": "d0"}
    with pytest.raises(Exception, match="no Hudi table"):
        save(spark.createDataFrame([], SCHEMA), path, **delete)
    save(spark.createDataFrame([("k0", 1, "d0", "v")], SCHEMA), path)
    with pytest.raises(Exception, match="mode\\('append'\\)"):
        save(spark.createDataFrame([], SCHEMA), path, mode="overwrite", **delete)
    assert rows(HudiTable(path).to_arrow(), ["id"]) == [("k0",)] and len(HudiTable(path).timeline()) == 1
