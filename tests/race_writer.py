"""A writer process for the race tests: upserts the same keys N times into one table, printing each outcome.

    python race_writer.py URI WRITER_ID N START_FILE   (storage options from the environment)

Waits for START_FILE to exist so both writers begin together; prints `ok <instant> <ts>` or `conflict <ts>`.
"""

from __future__ import annotations

import sys
import time
from pathlib import Path

import pyarrow as pa

from hudi_ds import CommitConflictError, HudiTable


def main() -> int:
    uri, writer, n, start = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
    while not Path(start).exists():
        time.sleep(0.01)
    table = HudiTable(uri, options={"compaction.schedule.enabled": "false"})
    for i in range(n):
        ts = 1000 * writer + i
        rows = pa.table({"id": [f"k{k}" for k in range(20)], "dt": ["a" if k % 2 else "b" for k in range(20)],
                         "ts": [ts] * 20, "v": [float(writer)] * 20})
        try:
            instant = table.write(rows)
            print(f"ok {instant} {ts}", flush=True)
        except CommitConflictError:
            print(f"conflict {ts}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
