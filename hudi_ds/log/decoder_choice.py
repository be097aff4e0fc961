"""Which decoder an Avro log block takes in this process: polars' native reader decodes ~15x faster than fastavro,
but importing polars costs as much CPU as fastavro decoding some 40,000 records. A process that only reads a few
small blocks (a script, the CLI, the first read of a small table) is better off never importing it (issue 32).
The same holds for encoding: polars writes the datums of large blocks ~3x faster than the NumPy encoders."""

from __future__ import annotations

import sys
import threading

# fastavro decodes this many records in a process before polars is imported: at most half an import's worth
POLARS_AFTER_RECORDS = 20_000
# a delete list of this many records goes to polars when it is imported already; a smaller one (a slice's
# delete block holds a few hundred) to hudi_ds.log.delete_scan, which has no per-block setup to pay
POLARS_DELETE_RECORDS = 4096

# the NumPy encoders write this many records in a process before polars is imported to write them (they take
# ~1 µs per change-data record: about an import's worth)
POLARS_ENCODE_AFTER_RECORDS = 100_000

_lock = threading.Lock()
_fastavro_records = 0
_numpy_encoded_records = 0


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


def use_polars_encoder(count: int) -> bool:
    """True when a block of `count` records is written by polars: it is imported already, or this block and the
    records the NumPy encoders wrote before it in this process reach POLARS_ENCODE_AFTER_RECORDS."""
    return count > 0 and ("polars" in sys.modules or _numpy_encoded_records + count >= POLARS_ENCODE_AFTER_RECORDS)


def encoded_by_numpy(count: int) -> None:
    """Count `count` records the NumPy encoders wrote, towards POLARS_ENCODE_AFTER_RECORDS."""
    global _numpy_encoded_records
    with _lock:
        _numpy_encoded_records += count
