"""Malformed storage options given to Spark (batch read and write, the streaming source and sink) surface as the
ConfigError naming the key, never as a panic of the store client; an endpoint written host:port, as S3A users
write it, works as a data source option."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest

from hudi_ds import HudiTable

pytestmark = [pytest.mark.spark]

OPTS = {"hoodie.table.name": "t", "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts", "hoodie.bucket.index.num.buckets": "2"}
DATA = pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "v": [1.0, 2.0, 3.0]})


def _surfaces_as_config_error(err: pytest.ExceptionInfo[BaseException]) -> None:
    text = str(err.value)
    assert "ConfigError" in text and "storage option AWS_ENDPOINT_URL='127.0.0.1:ab'" in text, text[-2000:]
    assert "PanicException" not in text and "panicked" not in text


def test_a_malformed_endpoint_fails_every_spark_entry_point_with_the_config_error(spark, s3, tmp_path):
    uri = f"s3a://{s3.new_bucket()}/t"
    HudiTable.create(uri.replace("s3a://", "s3://"), table_name="t", record_key="id", ordering_field="ts",
                     buckets=2, storage_options=s3.options()).write(DATA)
    bad = {**s3.options(), "AWS_ENDPOINT_URL": "127.0.0.1:ab"}
    df = spark.createDataFrame(DATA)
    with pytest.raises(Exception) as err:  # Spark wraps the Python error in its own
        df.write.format("hudi-py").options(**OPTS, **bad).mode("append").save(uri)
    _surfaces_as_config_error(err)
    with pytest.raises(Exception) as err:
        spark.read.format("hudi-py").options(**bad).load(uri).collect()
    _surfaces_as_config_error(err)
    with pytest.raises(Exception) as err:
        query: Any = (spark.readStream.format("hudi-py").options(**bad).load(uri).writeStream.format("memory")
                      .queryName("bad_source").option("checkpointLocation", str(tmp_path / "ck_source"))
                      .trigger(availableNow=True).start())
        query.awaitTermination(120)
    _surfaces_as_config_error(err)
    source = spark.readStream.format("hudi-py").options(**s3.options()).load(uri)
    with pytest.raises(Exception) as err:
        query = (source.writeStream.format("hudi-py").options(**OPTS, **bad)
                 .option("checkpointLocation", str(tmp_path / "ck_sink")).trigger(availableNow=True)
                 .start(f"s3a://{s3.new_bucket()}/sink"))
        query.awaitTermination(120)
    _surfaces_as_config_error(err)
    assert HudiTable(uri, storage_options=s3.options()).to_arrow().num_rows == 3


def test_an_endpoint_written_host_port_works_as_a_data_source_option(spark, s3):
    uri = f"s3a://{s3.new_bucket()}/t"
    creds = {**s3.options(), "AWS_ENDPOINT_URL": s3.endpoint.removeprefix("http://")}
    spark.createDataFrame(DATA).write.format("hudi-py").options(**OPTS, **creds).mode("append").save(uri)
    assert spark.read.format("hudi-py").options(**creds).load(uri).count() == 3
