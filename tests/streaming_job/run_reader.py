"""A streaming-read job for crash tests, run as a subprocess: hudi-py change feed -> Spark's parquet file sink.

    python run_reader.py TABLE_PATH OUTPUT_DIR CHECKPOINT --until-instant KEY

Reads the table's change feed (cdc format, two instants per micro-batch) into parquet files. Spark's file
sink is exactly-once on its own (its _spark_metadata log), so any duplicate or missing row in the output
comes from the source's offsets. The test kills this process group with SIGKILL at random moments and
restarts it; a run ends by itself once a finished micro-batch has consumed the commit `KEY`.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jobs import consumed, run_until  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("table")
    ap.add_argument("output")
    ap.add_argument("checkpoint")
    ap.add_argument("--until-instant", required=True)
    args = ap.parse_args()
    import faulthandler

    faulthandler.dump_traceback_later(60, repeat=True)  # a stuck job shows where, in the test's job log

    from hudi_ds.spark import session

    spark = session(**{"spark.sql.shuffle.partitions": "2"})
    feed = (spark.readStream.format("hudi-py")
            .option("hoodie.datasource.query.incremental.format", "cdc")
            .option("hoodie.datasource.read.streaming.max.instants", "2")
            .load(args.table))
    query = (feed.writeStream.format("parquet").option("path", args.output)
             .option("checkpointLocation", args.checkpoint).trigger(processingTime="200 milliseconds").start())
    return run_until(spark, query, lambda: consumed(args.checkpoint) >= args.until_instant)

if __name__ == "__main__":
    raise SystemExit(main())
