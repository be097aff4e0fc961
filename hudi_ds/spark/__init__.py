"""The Spark layer of hudi-py: the "hudi-py" data source, a session helper and input clustering.

    spark = hudi_ds.spark.session()
    df.write.format("hudi-py").options(**opts).mode("append").save(path)
    spark.read.format("hudi-py").load(path)
"""

from hudi_ds.spark.cluster import cluster_by_bucket
from hudi_ds.spark.read_table import read_table
from hudi_ds.spark.session import register, session

__all__ = ["cluster_by_bucket", "read_table", "register", "session"]
