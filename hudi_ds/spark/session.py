"""A correctly configured SparkSession for scripts, notebooks and tests, and explicit registration."""

from __future__ import annotations

import os
import site
import sys
from pathlib import Path
from typing import Any

DEFAULT_CONF: dict[str, str] = {
    "spark.sql.execution.arrow.pyspark.enabled": "true",
    "spark.sql.python.filterPushdown.enabled": "true",
    "spark.sql.session.timeZone": "UTC",
    "spark.ui.enabled": "false",
    "spark.ui.showConsoleProgress": "false",
    "spark.sql.shuffle.partitions": "8",
    "spark.driver.memory": "2g",
    "spark.python.daemon.module": "hudi_ds.spark.daemon",  # workers fork with the connector already imported
}


def _source_root_for_workers() -> str | None:
    """The folder holding `pyspark_hudi_ds` when Python's module scan would not find it (editable installs
    map packages through an import hook that pkgutil.iter_modules, used by Spark's lookup, does not see)."""
    import pyspark_hudi_ds

    root = str(Path(pyspark_hudi_ds.__file__).resolve().parent.parent)
    scanned = {str(Path(p).resolve()) for p in sys.path if p and os.path.isdir(p)}
    scanned |= {str(Path(p).resolve()) for p in site.getsitepackages()}
    return None if root in scanned else root


def register(spark: Any) -> None:
    """Register the "hudi-py" data source on `spark`. Auto-registration finds it too, but only a registration
    from the driver carries the session's `spark.hadoop.fs.s3a.*` settings (endpoint, keys) to the source."""
    from hudi_ds.spark.source import HudiDataSource
    from hudi_ds.storage.storage_options import from_s3a_settings

    s3a = from_s3a_settings(dict(spark.sparkContext.getConf().getAll()))
    if not s3a:
        spark.dataSource.register(HudiDataSource)
        return
    # a class made here is pickled by value with its settings into the Python workers that plan queries
    spark.dataSource.register(type("HudiDataSource", (HudiDataSource,), {"session_storage_options": s3a}))


def session(master: str | None = None, app_name: str = "hudi-py", log_level: str = "ERROR",
            **conf: Any) -> Any:
    """A local SparkSession set up for hudi-py: Python workers on this interpreter, Arrow on, filter pushdown
    on, UTC session time zone, master local[2] by default, quiet logs. `conf` holds Spark settings, e.g.
    ``session(**{"spark.sql.shuffle.partitions": "4"})``; an existing session is reused (SQL settings applied).
    """
    from pyspark.sql import SparkSession

    os.environ["PYSPARK_PYTHON"] = sys.executable
    os.environ["PYSPARK_DRIVER_PYTHON"] = sys.executable
    extra = _source_root_for_workers()
    if extra is not None:
        paths = [p for p in os.environ.get("PYTHONPATH", "").split(os.pathsep) if p]
        if extra not in paths:
            os.environ["PYTHONPATH"] = os.pathsep.join([extra, *paths])
    settings = {**DEFAULT_CONF, "spark.pyspark.python": sys.executable,
                "spark.pyspark.driver.python": sys.executable, "spark.executorEnv.PYSPARK_PYTHON": sys.executable}
    if extra is not None:
        settings["spark.executorEnv.PYTHONPATH"] = os.environ["PYTHONPATH"]
    settings.update({k: str(v).lower() if isinstance(v, bool) else str(v) for k, v in conf.items()})
    builder = SparkSession.builder.master(master or "local[2]").appName(app_name)
    for key, value in settings.items():
        builder = builder.config(key, value)
    spark = builder.getOrCreate()
    spark.sparkContext.setLogLevel(log_level)
    register(spark)
    return spark
