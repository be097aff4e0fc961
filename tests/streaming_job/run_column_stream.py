"""A streaming job for the two-writer crash test, run as a subprocess: parquet files carrying the record key and
some columns of a partial-update table -> hudi-py sink (KEEP_VALUES: a write keeps the columns it does not carry).

    python run_column_stream.py SOURCE_DIR TABLE_PATH CHECKPOINT IDENTIFIER --until-files N [--compaction-every N]

One file per micro-batch. Two of these jobs write the same table with different columns; a micro-batch that loses
the commit race to the other job fails with CommitConflictError, and the job restarts its query from the checkpoint,
as a supervisor would. The test kills the process group with SIGKILL and starts the job again.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from jobs import files_read  # noqa: E402


def main() -> int:
    ap = argparse.ArgumentParser()
    ap.add_argument("source")
    ap.add_argument("table")
    ap.add_argument("checkpoint")
    ap.add_argument("identifier")
    ap.add_argument("--until-files", type=int, required=True)
    ap.add_argument("--compaction-every", type=int, default=1000)
    args = ap.parse_args()
    import pyarrow.parquet as pq

    from hudi_ds.spark import session
    from hudi_ds.spark.types import spark_schema

    spark = session(**{"spark.sql.shuffle.partitions": "2", "spark.ui.enabled": "false"})
    schema = spark_schema(pq.read_schema(next(Path(args.source).glob("*.parquet"))))

    def start():  # noqa: ANN202 - a StreamingQuery
        df = spark.readStream.schema(schema).option("maxFilesPerTrigger", 1).parquet(args.source)
        return (df.writeStream.format("hudi-py")
                .option("hoodie.datasource.write.recordkey.field", "id")
                .option("hoodie.datasource.write.streaming.checkpoint.identifier", args.identifier)
                .option("compaction.delta_commits", str(args.compaction_every))
                .option("checkpointLocation", args.checkpoint)
                .trigger(processingTime="300 milliseconds")
                .start(args.table))

    query = start()
    while files_read(args.checkpoint) < args.until_files:
        failure = query.exception()
        if failure is not None:
            if "CommitConflictError" not in str(failure):
                print(failure, file=sys.stderr)
                return 1
            query = start()  # the other writer committed to the same file groups first: replay the batch
        time.sleep(0.3)
    query.stop()
    spark.stop()
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
