"""A streaming-read job for crash tests, run as a subprocess: hudi-py change feed -> Spark's parquet file sink.

    python run_reader.py TABLE_PATH OUTPUT_DIR CHECKPOINT --until-instant KEY

Reads the table's change feed (cdc format, two instants per micro-batch) into parquet files. Spark's file
sink is exactly-once on its own (its _spark_metadata log), so any duplicate or missing row in the output
comes from the source's offsets. The test kills this process group with SIGKILL at random moments and
restarts it; a run ends by itself once a finished micro-batch has consumed the commit `KEY`.
"""

from __future__ import annotations

import argparse
import json
import sys
import time
from pathlib import Path


def consumed(checkpoint: str) -> str:
    """The source offset of the newest micro-batch Spark finished ("0" before any)."""
    ids = [int(p.name) for p in Path(checkpoint, "commits").glob("[0-9]*") if p.name.isdigit()]
    if not ids:
        return "0"
    lines = Path(checkpoint, "offsets", str(max(ids))).read_text().splitlines()
    return str(json.loads(lines[-1])["instant"])


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
    while consumed(args.checkpoint) < args.until_instant:
        if query.exception() is not None:
            print(query.exception(), file=sys.stderr)
            return 1
        time.sleep(0.3)
    query.stop()
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
