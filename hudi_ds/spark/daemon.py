"""Spark's Python worker daemon with the connector imported once, so every forked worker starts warm.

Spark forks one Python worker per task, planning step and commit from `pyspark.daemon`; each would import
hudi_ds (pyarrow, numpy, pydantic: ~0.4 s of CPU) again. `hudi_ds.spark.session()` sets
`spark.python.daemon.module=hudi_ds.spark.daemon`, which imports them in the daemon before it forks. Only
fork-safe libraries are imported here (polars, whose thread pool is not, is imported lazily where used).
"""

from __future__ import annotations

from pyspark import daemon

import hudi_ds.spark.source  # noqa: F401 - the point: loaded once, inherited by every fork
import pyspark_hudi_ds  # noqa: F401

if __name__ == "__main__":
    daemon.manager()
