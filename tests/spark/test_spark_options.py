"""Options: parsing (no Spark), auto-registration, and every user error surfacing through Spark intact."""

from __future__ import annotations

import os
import pkgutil
from typing import Any

import pyarrow as pa
import pytest
from tables import rows

from hudi_ds import ConfigError, HudiTable
from hudi_ds.config.option_field import SCOPES
from hudi_ds.config.option_parsing import OPTION_SPECS, parse_options
from hudi_ds.config.options import HudiOptions
from hudi_ds.spark.options import parse_spark_options

# ---- parsing (no Spark) ----------------------------------------------------------------------------


def test_defaults_and_canonical_keys():
    opts = parse_options({"path": "/t", "hoodie.datasource.write.recordkey.field": "a, b"})
    assert opts.record_key == ["a", "b"] and opts.table_type == "MERGE_ON_READ" and opts.num_buckets == 4
    assert opts.operation == "upsert" and opts.query_type == "snapshot" and opts.index_type == "BUCKET"
    assert opts.is_set("record_key") and not opts.is_set("num_buckets")


def test_flink_aliases_and_tolerated_keys():
    opts = parse_spark_options({
        "table.type": "cow", "write.operation": "INSERT", "precombine.field": "ts", "index.type": "bucket",
        "write.tasks": "4", "read.start-commit": "earliest", "read.end-commit": "20240101000000000",
        "path": "/t", "checkpointlocation": "/ck", "spark.some.conf": "x", "changelog.enabled": "true",
    })
    assert opts.table_type == "COPY_ON_WRITE" and opts.operation == "insert" and opts.ordering_field == "ts"
    assert opts.begin_instant == "earliest" and opts.end_instant == "20240101000000000"
    assert opts.changelog_enabled and opts.write_tasks == 4


@pytest.mark.parametrize("key,suggestion", [
    ("hoodie.datasource.write.recordkey.feild", "hoodie.datasource.write.recordkey.field"),
    ("hoodie.datasource.write.operaton", "hoodie.datasource.write.operation"),
    ("hoodie.bucket.index.numbuckets", "hoodie.bucket.index.num.buckets"),
    ("recordkey.field", "hoodie.datasource.write.recordkey.field"),
    ("as.of.instnt", "as.of.instant"),
])
def test_misspelled_option_names_the_closest(key, suggestion):
    with pytest.raises(ConfigError, match=f"did you mean '{suggestion}'"):
        parse_options({key: "x"})


@pytest.mark.parametrize("options,message", [
    ({"hoodie.bucket.index.num.buckets": "many"}, "hoodie.bucket.index.num.buckets='many' is not valid"),
    ({"hoodie.bucket.index.num.buckets": "0"}, "between 1 and 99999999"),
    ({"hoodie.datasource.write.table.type": "DELTA"}, "MERGE_ON_READ"),
    ({"hoodie.index.type": "HBASE"}, "external HBase table"),
    ({"hoodie.index.type": "NO_SUCH"}, "BUCKET"),
    ({"hoodie.datasource.write.operation": "merge"}, "upsert"),
    ({"hoodie.metadata.compact.max.delta.commits": "0"}, "at least 1"),
    ({"hoodie.datasource.write.payload.class": "org.x.OverwriteWithLatestAvroPayload"},
     "does not have the merge rule of org.x.OverwriteWithLatestAvroPayload"),
    ({"precombine.field": "a", "hoodie.datasource.write.precombine.field": "b"}, "keep one"),
])
def test_bad_values(options, message):
    with pytest.raises(ConfigError, match=message):
        parse_options(options)


def test_every_option_is_documented():
    keys = [s.key for s in OPTION_SPECS] + [a for s in OPTION_SPECS for a in s.aliases]
    assert len(keys) == len({k.lower() for k in keys}), "an alias collides with another option"
    assert {s.name for s in OPTION_SPECS} == set(HudiOptions.model_fields)
    assert all(s.doc and s.scope in SCOPES for s in OPTION_SPECS)


def test_auto_registration_module_is_discoverable():
    """pyspark registers DefaultSource of every top-level pyspark_* module (pkgutil.iter_modules)."""
    found = [m.name for m in pkgutil.iter_modules() if m.name == "pyspark_hudi_ds"]
    assert found, "pyspark_hudi_ds is not on a sys.path folder: install the package (pip install .)"
    import pyspark_hudi_ds

    assert pyspark_hudi_ds.DefaultSource.name() == "hudi-py"


# ---- errors through Spark ----------------------------------------------------------------------------

BASE = {"hoodie.table.name": "opt_t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.datasource.write.partitionpath.field": "dt"}


def _data(ids: range, ts: int = 1) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "v": [float(i) for i in ids],
                     "dt": ["a" if i % 2 else "b" for i in ids]})


def _write(spark: Any, data: pa.Table, path: str, **opts: str) -> None:
    spark.createDataFrame(data).coalesce(1).write.format("hudi-py").options(**opts).mode("append").save(path)


def _state(spark: Any, path: str) -> tuple[list, list, list]:
    t = HudiTable(path)
    completed = [i.requested_time for i in t.timeline() if i.action != "rollback" and i.is_completed]
    pending = [i.requested_time for i in t.timeline() if not i.is_completed]
    data = spark.read.format("hudi-py").load(path).toArrow()
    return completed, pending, rows(data, data.column_names)


def _data_files(path: str) -> set[str]:
    out = set()
    for root, dirs, files in os.walk(path):
        dirs[:] = [d for d in dirs if d != ".hoodie"]
        out.update(os.path.join(root, f) for f in files)
    return out


@pytest.fixture
def existing(spark, table_path) -> str:
    _write(spark, _data(range(10)), table_path, **BASE)
    return table_path


@pytest.mark.spark
@pytest.mark.parametrize("change,message", [
    ({"hoodie.datasource.write.recordkey.fild": "id"}, "did you mean 'hoodie.datasource.write.recordkey.field'"),
    ({"hoodie.datasource.write.recordkey.field": "v"}, "hoodie.datasource.write.recordkey.field='v' contradicts"),
    ({"hoodie.datasource.write.partitionpath.field": "id"}, "which has 'dt'"),
    ({"hoodie.datasource.write.table.type": "COPY_ON_WRITE"}, "which has 'MERGE_ON_READ'"),
    ({"hoodie.bucket.index.num.buckets": "8"}, "hoodie.bucket.index.num.buckets=8 contradicts"),
    ({"hoodie.datasource.write.precombine.field": "v"}, "which has 'ts'"),
])
def test_option_errors_surface_and_change_nothing(spark, existing, change, message):
    before, files = _state(spark, existing), _data_files(existing)
    with pytest.raises(Exception) as err:
        _write(spark, _data(range(5, 15), 2), existing, **{**BASE, **change})
    assert message in str(err.value)
    assert _state(spark, existing) == before and _data_files(existing) == files


@pytest.mark.spark
def test_null_record_key_fails_in_executor_and_rolls_back(spark, existing):
    before, files = _state(spark, existing), _data_files(existing)
    bad = pa.table({"id": ["k1", None, "k3"], "ts": [2, 2, 2], "v": [1.0, 2.0, 3.0], "dt": ["a", "b", "a"]})
    with pytest.raises(Exception) as err:
        _write(spark, bad, existing, **BASE)
    assert "record key column 'id' is null or empty in 1 row(s)" in str(err.value)
    assert _state(spark, existing) == before and _data_files(existing) == files
    assert not os.path.exists(os.path.join(existing, ".hoodie", ".temp")) or not os.listdir(
        os.path.join(existing, ".hoodie", ".temp"))


@pytest.mark.spark
def test_schema_conflict_surfaces(spark, existing):
    before = _state(spark, existing)
    conflicting = _data(range(3)).set_column(1, "ts", pa.array(["x", "y", "z"]))
    with pytest.raises(Exception) as err:
        _write(spark, conflicting, existing, **BASE)
    assert "column 'ts' has type string but the table stores int64" in str(err.value)
    assert _state(spark, existing) == before


@pytest.mark.spark
def test_missing_columns(spark, table_path, existing):
    with pytest.raises(Exception) as err:
        _write(spark, _data(range(3)).drop_columns(["dt"]), existing, **BASE)
    assert "the partition column 'dt' is missing" in str(err.value)
    with pytest.raises(Exception) as err:
        spark.read.format("hudi-py").load(table_path + "_nowhere").count()
    assert "is not a Hudi table" in str(err.value)


@pytest.mark.spark
def test_schema_evolution_adds_columns(spark, existing):
    wider = _data(range(10, 12), 2).append_column("extra", pa.array([1, 2], pa.int32()))
    _write(spark, wider, existing, **BASE)
    df = spark.read.format("hudi-py").load(existing)
    assert df.schema["extra"].dataType.simpleString() == "int"
    got = {r["id"]: r["extra"] for r in df.toArrow().to_pylist()}
    assert got["k10"] == 1 and got["k0"] is None
