"""The rows of a parquet file whose key is one of some keys, with the other columns decoded for those rows only.

The change of a commit needs the previous version of the few keys it wrote (a few percent of a base file's rows).
pyarrow decodes a row group's columns whole before a filter; polars' prefiltered parquet read decodes the key
column first and the other columns only for the rows it keeps (about half the CPU on bench_lakes' base files).
polars does not give every Arrow type back as it read it, so only files whose wanted columns are of types it
round-trips take this path; the caller reads the others with pyarrow.
"""

from __future__ import annotations

import io

import pyarrow as pa

from hudi_ds.errors import CorruptTableError
from hudi_ds.storage import Storage


def _round_trips(typ: pa.DataType) -> bool:
    """Types polars hands back to Arrow as they were (strings as large strings, cast back)."""
    return (pa.types.is_integer(typ) or pa.types.is_boolean(typ) or typ in (pa.float32(), pa.float64())
            or pa.types.is_string(typ) or pa.types.is_large_string(typ))


def _plain(field: pa.Field) -> pa.Field:
    """A column read as a dictionary (few distinct strings) comes back plain."""
    return field.with_type(field.type.value_type) if pa.types.is_dictionary(field.type) else field


def prefiltered_rows(storage: Storage, path: str, file_schema: pa.Schema, columns: list[str], key_field: str,
                     keys: pa.Array | pa.ChunkedArray) -> pa.Table | None:
    """The `columns` of the rows of parquet file `path` (of `file_schema`) whose `key_field` is one of `keys`
    (in file order, the key column last), in the file's own Arrow types (dictionaries decoded); None, having
    read nothing, when a column's type or the keys rule this path out."""
    wanted = [*columns, key_field]
    fields = [_plain(file_schema.field(c)) for c in wanted]
    if not all(_round_trips(f.type) for f in fields) or keys.null_count or not keys.type.equals(fields[-1].type):
        return None
    import polars as pl

    try:
        frame = (pl.scan_parquet(io.BytesIO(storage.read_bytes(path)), parallel="prefiltered").select(wanted)
                 .filter(pl.col(key_field).is_in(pl.Series(key_field, keys).implode())).collect())
    except pl.exceptions.PolarsError as exc:
        raise CorruptTableError(f"base file {path} is unreadable (damaged or truncated: {exc}); restore it, or "
                                "roll back the commit that wrote it") from exc
    return frame.to_arrow().cast(pa.schema(fields))
