"""Parquet encoding choices shared by every parquet hudi_ds writes: base files, compaction, parquet log blocks."""

from __future__ import annotations

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.schema.meta import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, PARTITION_PATH, RECORD_KEY

_LOW_CARDINALITY_META = (COMMIT_TIME, PARTITION_PATH, FILE_NAME)
# min/max statistics no reader prunes by (one value per file, or keys Hudi's readers look up in the footer's
# hoodie_min/max_record_key, which column_stats takes too), and computing them on these strings costs about a
# quarter of the encoding
_NO_STATISTICS = frozenset({COMMIT_SEQNO, RECORD_KEY, FILE_NAME})


def statistics_columns(table: pa.Table, meta_populated: bool = True) -> list[str]:
    """Columns of a base file to write min/max statistics for: all but the meta columns no reader prunes by
    (log blocks have none: readers decode them whole). The partition path column (one dictionary value per
    file: cheap) gets them where the meta columns are populated, for column_stats, as Hudi's files have."""
    skip = _NO_STATISTICS if meta_populated else _NO_STATISTICS | {PARTITION_PATH}
    return [c for c in table.column_names if c not in skip]


def dictionary_columns(table: pa.Table, sample: int = 8192) -> list[str]:
    """Columns worth dictionary-encoding, judged on a sample: trying it on unique values (keys, sequence
    numbers, measurements) triples the parquet write time for nothing."""
    head = table.slice(0, sample)
    out = [c for c in _LOW_CARDINALITY_META if c in table.column_names]
    for field in table.schema:
        if field.name in out or field.name.startswith("_hoodie_") or pa.types.is_nested(field.type):
            continue
        if pa.types.is_dictionary(field.type):  # read as a dictionary: it has few values
            out.append(field.name)
            continue
        if head.num_rows == 0 or pc.count_distinct(head[field.name]).as_py() <= head.num_rows // 4:
            out.append(field.name)
    return out


def few_valued_strings(table: pa.Table) -> list[str]:
    """The string columns dictionary_columns chooses (judged on a sample of `table`)."""
    return [c for c in dictionary_columns(table) if c in table.column_names and pa.types.is_string(table.schema.field(c).type)]


def few_valued_as_dictionaries(table: pa.Table, columns: list[str]) -> pa.Table:
    """`table` with the string `columns` (few_valued_strings) dictionary-encoded: done before a write splits its
    input by file group, each group then gathers small integers instead of strings, and parquet writes the
    dictionary as given instead of hashing every string again (the files are the same)."""
    chosen = set(columns)
    encoded = [pc.dictionary_encode(table[f.name]) if f.name in chosen and pa.types.is_string(f.type)
               else table[f.name] for f in table.schema]
    return pa.Table.from_arrays(encoded, names=table.column_names)
