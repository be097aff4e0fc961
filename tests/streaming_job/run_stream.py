"""A streaming job for crash tests, run as a subprocess: parquet batch files -> hudi-py sink (MOR, change data
written at commit time).

    python run_stream.py SOURCE_DIR TABLE_PATH CHECKPOINT [--compaction-every N] [--until-files N]

One file per micro-batch (maxFilesPerTrigger=1). The test kills this process group with SIGKILL at random
moments or at named points (HUDI_DS_TEST_PAUSE_AT, see hudi_ds.spark.stream_writer) and restarts it.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jobs import files_read, run_until  # noqa: E402
from source_data import SCHEMA  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("table")
    ap.add_argument("checkpoint")
    ap.add_argument("--compaction-every", type=int, default=3)
    ap.add_argument("--until-files", type=int, required=True)
    args = ap.parse_args()
    import faulthandler

    faulthandler.dump_traceback_later(60, repeat=True)  # a stuck job shows where, in the test's job.log

    from pyspark.sql.types import StructType

    from hudi_ds.spark import session

    spark = session(**{"spark.sql.shuffle.partitions": "2"})
    schema = StructType.fromJson({"type": "struct", "fields": [
        {"name": f.name, "type": {"string": "string", "int64": "long", "double": "double"}[str(f.type)],
         "nullable": True, "metadata": {}} for f in SCHEMA]})
    df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(args.source)
    query = (df.repartition(2).writeStream.format("hudi-py")
             .option("hoodie.table.name", "crash")
             .option("hoodie.datasource.write.recordkey.field", "id")
             .option("hoodie.datasource.write.precombine.field", "ts")
             .option("hoodie.datasource.write.partitionpath.field", "region")
             .option("hoodie.bucket.index.num.buckets", "2")
             .option("hoodie.datasource.write.changelog.column", "op")
             .option("compaction.delta_commits", str(args.compaction_every))
             .option("clean.retain_commits", "4")
             .option("hoodie.table.cdc.enabled", "true")
             .option("checkpointLocation", args.checkpoint)
             .trigger(processingTime="200 milliseconds")
             .start(args.table))
    # run until every source file was committed by the sink, then stop cleanly
    return run_until(spark, query, lambda: files_read(args.checkpoint) >= args.until_files)

if __name__ == "__main__":
    raise SystemExit(main())
