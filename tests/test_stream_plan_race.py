"""The streaming sink's tasks of one micro-batch must share one instant, however their plan lookups interleave
(found by the chaos suite: a task that took a racing task's fresh plan for stale wrote under a second instant,
which the commit rolled back with its rows)."""

from __future__ import annotations

from pyspark.sql.types import LongType, StringType, StructField, StructType

from hudi_ds.config.option_parsing import parse_options
from hudi_ds.spark.stream_writer import HudiStreamWriter
from hudi_ds.storage import open_storage
from hudi_ds.storage.layout import streaming_plan_dir

SCHEMA = StructType([StructField("id", StringType()), StructField("ts", LongType())])


def test_a_plan_created_while_a_task_looks_for_one_is_shared(tmp_path):
    opts = parse_options({"hoodie.table.name": "race", "hoodie.datasource.write.recordkey.field": "id",
                          "hoodie.datasource.write.precombine.field": "ts",
                          "hoodie.bucket.index.num.buckets": "2", "path": str(tmp_path / "t")})
    task_b = HudiStreamWriter(opts, open_storage(str(tmp_path / "t")), SCHEMA)  # two processes, two clients
    storage = open_storage(str(tmp_path / "t"))
    task_a = HudiStreamWriter(opts, storage, SCHEMA)
    plans = {}
    real_list = storage.list

    def list_while_b_plans(rel=""):
        if rel == streaming_plan_dir(opts.streaming_identifier) and "b" not in plans:
            # task B creates the batch's plan while task A lists the plans
            plans["b"] = task_b._plan_for(7, "run")
        return real_list(rel)

    storage.list = list_while_b_plans
    try:
        plans["a"] = task_a._plan_for(7, "run")
    finally:
        storage.list = real_list
    assert plans["a"].instant == plans["b"].instant
