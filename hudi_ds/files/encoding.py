"""Parquet encoding choices shared by every parquet hudi_ds writes: base files, compaction, parquet log blocks."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.schema.meta import COMMIT_TIME, FILE_NAME, PARTITION_PATH

_LOW_CARDINALITY_META = (COMMIT_TIME, PARTITION_PATH, FILE_NAME)


def dictionary_columns(table: pa.Table, sample: int = 8192) -> list[str]:
    """Columns worth dictionary-encoding, judged on a sample: trying it on unique values (keys, sequence
    numbers, measurements) triples the parquet write time for nothing."""
    head = table.slice(0, sample)
    out = [c for c in _LOW_CARDINALITY_META if c in table.column_names]
    for field in table.schema:
        if field.name in out or field.name.startswith("_hoodie_") or pa.types.is_nested(field.type):
            continue
        if head.num_rows == 0 or pc.count_distinct(head[field.name]).as_py() <= head.num_rows // 4:
            out.append(field.name)
    return out
