"""One SparkSession for every Spark test (a cold session costs ~10 s on two cores).

hudi_ds.spark.session() sets PYSPARK_PYTHON / PYSPARK_DRIVER_PYTHON to this interpreter and turns on Arrow and
filter pushdown; tests that change a setting restore it.
"""

from __future__ import annotations

import sys
from collections.abc import Iterator
from typing import Any

import pytest

SPARK_CONF = {
    "spark.sql.shuffle.partitions": "4",
    "spark.default.parallelism": "2",
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.ui.enabled": "false",
    "spark.sql.adaptive.enabled": "true",
    "spark.python.worker.reuse": "true",
}


@pytest.fixture(scope="session")
def spark() -> Iterator[Any]:
    from hudi_ds.spark import session

    s = session(master="local[2]", app_name="hudi-py-tests", **SPARK_CONF)
    assert s.sparkContext.pythonExec == sys.executable
    yield s
    s.stop()


@pytest.fixture
def table_path(tmp_path) -> str:
    return str(tmp_path / "table")
