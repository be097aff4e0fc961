"""Which decoder an Avro log block takes in this process: polars' native reader decodes ~15x faster than fastavro,
but importing polars costs as much CPU as fastavro decoding some 40,000 records. A process that only reads a few
small blocks (a script, the CLI, the first read of a small table) is better off never importing it (issue 32)."""

from __future__ import annotations

import sys
import threading

# fastavro decodes this many records in a process before polars is imported: at most half an import's worth
POLARS_AFTER_RECORDS = 20_000
# a delete list of this many records goes to polars when it is imported already; a smaller one (a slice's
# delete block holds a few hundred) to hudi_ds.log.delete_scan, which has no per-block setup to pay
POLARS_DELETE_RECORDS = 4096

_lock = threading.Lock()
_fastavro_records = 0


def use_polars(count: int) -> bool:
    """True when a block of `count` records goes to polars: it is imported already, or this block and the
    records fastavro decoded before it in this process reach POLARS_AFTER_RECORDS (so a table of many small
    blocks imports polars once fastavro has cost about half of that import)."""
    return "polars" in sys.modules or _fastavro_records + count >= POLARS_AFTER_RECORDS


def decoded_by_fastavro(count: int) -> None:
    """Count `count` records fastavro decoded, towards POLARS_AFTER_RECORDS."""
    global _fastavro_records
    with _lock:
        _fastavro_records += count
