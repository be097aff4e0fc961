"""Auto-registration of the "hudi-py" Spark data source.

pyspark >= 4.0 imports every top-level module named ``pyspark_*`` found on the Python path and registers its
``DefaultSource`` under ``DefaultSource.name()``, so ``spark.read.format("hudi-py")`` works without a
``register()`` call.
"""

from hudi_ds.spark.source import HudiDataSource as DefaultSource

__all__ = ["DefaultSource"]
