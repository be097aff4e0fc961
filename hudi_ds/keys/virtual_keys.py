"""Virtual keys (hoodie.populate.meta.fields=false): the meta columns of base files that do not hold them.

Apache Hudi's writers keep the five `_hoodie_*` columns in such base files (the write handles' schema always has
them) but leave them null, except `_hoodie_file_name`, and write no record-key footer (min/max keys, bloom
filter): the reference tables `cow_v6/v8_simplekeygen_hivestyle_no_metafields` show it. Whoever needs the columns computes them: the record key from the record key columns with the table's key
generator, the partition path and file name from where the file lies, and the commit time from the instant in
the file name, so every row of a file counts as written by the commit that wrote the file.
"""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa

from hudi_ds.keys.keygen import record_key_strings
from hudi_ds.schema.meta import COMMIT_SEQNO, COMMIT_TIME, FILE_NAME, META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_ds.schema.strings import constant_strings

__all__ = ["blank_meta", "computed_meta"]


def blank_meta(records: pa.Table) -> pa.Table:
    """`records` (meta columns first) as a virtual-key base file holds them: the meta columns null but the file
    name."""
    n = records.num_rows
    for name in META_COLUMNS:
        if name != FILE_NAME:
            records = records.set_column(META_COLUMNS.index(name), name, pa.nulls(n, pa.string()))
    return records


def computed_meta(table: pa.Table, key_fields: Sequence[str], partition: str, instant: str,
                  file_name: str) -> pa.Table:
    """The rows of a virtual-key base file (`instant`'s file `file_name` in `partition`) with the meta columns
    computed in front of the data columns (any the file holds are replaced); the commit sequence number stays
    null, as no file says it."""
    n = table.num_rows
    data = table.drop_columns([c for c in META_COLUMNS if c in table.column_names])
    values = {
        COMMIT_TIME: constant_strings(instant, n),
        COMMIT_SEQNO: pa.nulls(n, pa.string()),
        RECORD_KEY: record_key_strings(data, key_fields),
        PARTITION_PATH: constant_strings(partition, n),
        FILE_NAME: constant_strings(file_name, n),
    }
    for name in reversed(META_COLUMNS):
        data = data.add_column(0, name, values[name])
    return data
