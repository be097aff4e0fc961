"""Parquet base files as Apache Hudi writes them, for new file groups, copy-on-write rewrites and compaction,
and the one way they are opened for reading (a damaged file is a CorruptTableError naming it).

The marker comes first (a rollback finds the file through it); the footer carries Hudi's keys (the Avro schema,
min/max record key) and not Arrow's own schema, so other engines type the columns from parquet alone.
pyarrow.parquet (with pyarrow.fs, ~0.03 CPU-s) is imported by the first call that opens or writes a file, not by
`import hudi_ds` (issue 32).
"""

from __future__ import annotations

import io
import json
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds import faults
from hudi_ds.errors import CorruptTableError, MissingFileError
from hudi_ds.files.encoding import statistics_columns
from hudi_ds.files.markers import write_marker
from hudi_ds.files.naming import join
from hudi_ds.schema.meta import FILE_NAME, META_COLUMNS, RECORD_KEY
from hudi_ds.schema.strings import constant_dictionary
from hudi_ds.storage import Storage

if TYPE_CHECKING:
    import pyarrow.parquet as pq

    from hudi_ds.hfile.bloom import BloomFilter


# rows Arrow's parquet writer encodes at a time: at its default, 1,024, the per-batch work took 12% of a rewritten
# base file's write (96,000 rows: 16.2 -> 14.2 ms); the pages and bytes written came out the same
_WRITE_BATCH_ROWS = 1 << 16


def write_base_file(storage: Storage, instant: str, partition: str, name: str, records: pa.Table,
                    avro_schema: dict[str, Any], *, compression: str, dictionary: list[str], merge: bool,
                    row_group_rows: int | None = None, bloom_filter: bool = False, key_footer: bool = True,
                    grown_filter: GrownFilter | None = None,
                    key_range: tuple[str, str] | None = None) -> tuple[int, pq.FileMetaData]:
    """Write `records` (meta columns included; the file name column is filled here) as the base file `name`
    of `partition`; returns its size and footer (the column statistics the commit indexes). `merge`: the file
    replaces an older version of its group. `bloom_filter`: the footer carries the bloom filter of the file's
    keys, as Apache Hudi's bloom index reads it (`grown_filter`: the filter of the file this one rewrites and the
    keys it adds). `key_footer`: the footer names the file's lowest and highest record key (not in files without
    meta fields, as in Hudi's; `key_range`: those keys, known without comparing every key: widened_key_range)."""
    write_marker(storage, instant, join(partition, name), "MERGE" if merge else "CREATE")
    n = records.num_rows
    records = records.set_column(META_COLUMNS.index(FILE_NAME), FILE_NAME, constant_dictionary(name, n))
    # one dictionary per column: parquet's writer falls back to PLAIN for the rest of a column chunk when the
    # dictionary changes between chunks (a compaction's base rows and log rows), hashing every value again
    records = records.unify_dictionaries()
    kv = {"parquet.avro.schema": json.dumps(avro_schema), "writer.model.name": "avro"}
    if n and key_footer:
        if key_range is None:
            mm = pc.min_max(records[RECORD_KEY])
            key_range = mm["min"].as_py(), mm["max"].as_py()
        kv[MIN_KEY.decode()], kv[MAX_KEY.decode()] = key_range
    if bloom_filter:
        kv.update(bloom_footer(records[RECORD_KEY], grown_filter))
    import pyarrow.parquet as pq

    sink = io.BytesIO()
    # store_schema=False keeps Arrow's own schema out of the footer (hudi-rs types come from parquet);
    # Hudi's footer keys are added explicitly, as that option also drops schema metadata
    with pq.ParquetWriter(sink, records.schema, compression=compression, store_schema=False,
                          use_dictionary=dictionary, write_batch_size=_WRITE_BATCH_ROWS,
                          write_statistics=statistics_columns(records, key_footer)) as writer:
        writer.write_table(records, row_group_size=max(1, row_group_rows) if row_group_rows else None)
        writer.add_key_value_metadata(kv)
    data = sink.getvalue()
    storage.write_bytes(join(partition, name), data)
    faults.file_written()
    return len(data), writer.writer.metadata


@contextmanager
def open_base_file(storage: Storage, rel: str, few_valued_as_dictionary: bool = False,
                   **options: Any) -> Iterator[pq.ParquetFile]:
    """A committed base file opened for reading; missing or unreadable, it is a CorruptTableError naming it.

    `few_valued_as_dictionary`: string columns stored as small dictionaries are read as Arrow dictionaries
    (the caller expands them with hudi_ds.schema.strings.decoded, far cheaper than parquet's plain decode)."""
    import pyarrow.parquet as pq

    try:
        with storage.open_input(rel) as f:
            if few_valued_as_dictionary:
                metadata = pq.read_metadata(f)
                options = {**options, "metadata": metadata, "read_dictionary": few_valued_strings(metadata)}
            yield pq.ParquetFile(f, **options)
    except FileNotFoundError as exc:
        raise MissingFileError(f"base file {rel} is missing: the table lost a committed file; restore it, or "
                                "roll back the commit that wrote it") from exc
    except (OSError, pa.ArrowException) as exc:
        raise CorruptTableError(f"base file {rel} is unreadable (damaged or truncated: {exc}); restore it, or "
                                "roll back the commit that wrote it") from exc


# Apache Hudi's defaults: hoodie.index.bloom.num_entries, hoodie.index.bloom.fpp,
# hoodie.bloom.index.filter.dynamic.max.entries (the filter type: DYNAMIC_V0)
BLOOM_ENTRIES, BLOOM_FPP, BLOOM_MAX_ENTRIES = 60000, 1e-9, 100000
BLOOM_FILTER_KEY = "org.apache.hudi.bloomfilter"
MIN_KEY, MAX_KEY = b"hoodie_min_record_key", b"hoodie_max_record_key"  # the footer's key range
BLOOM_TYPE_KEY = "hoodie_bloom_filter_type_code"


STALE_KEYS_ALLOWED = 0.1  # a grown filter may hold this share of keys its file no longer has, else it is rebuilt


@dataclass(frozen=True)
class GrownFilter:
    """The bloom filter footer of the base file a rewrite replaces (None: it has none) and the record keys the
    rewrite brings that the file did not hold (a superset does no harm)."""

    previous: Mapping[bytes, bytes] | None
    added: pa.ChunkedArray | pa.Array


def bloom_footer(keys: pa.ChunkedArray | pa.Array, grown: GrownFilter | None = None) -> dict[str, str]:
    """The footer keys of Hudi's parquet writer (HoodieBloomFilterWriteSupport): the filter of the record keys,
    added in file order, and its type.

    With `grown`, the rewritten file's filter with the new keys added: the keys a rewrite keeps are in it
    already, so only the new ones are hashed (a rewrite that adds a tenth of the keys hashes a tenth of them).
    Every key of the file tests positive, as Hudi's bloom index requires; the keys the rewrite dropped still do
    too, so the filter is rebuilt once they would exceed STALE_KEYS_ALLOWED of the file's keys. A filter that
    cannot be read or was built with other settings is rebuilt from the keys."""
    from hudi_ds.hfile.bloom import BloomFilter  # writers only: a read does not import the HFile package

    bloom = _grown(grown, len(keys)) if grown is not None else None
    if bloom is None:
        bloom = BloomFilter(BLOOM_ENTRIES, BLOOM_FPP, BLOOM_MAX_ENTRIES)
        bloom.add_strings(keys)
    return {BLOOM_FILTER_KEY: bloom.serialize().decode("ascii"), BLOOM_TYPE_KEY: bloom.type_code}


def _grown(grown: GrownFilter, key_count: int) -> BloomFilter | None:
    from hudi_ds.hfile.bloom import TYPE_CODE, BloomFilter

    footer = grown.previous or {}
    text = footer.get(BLOOM_FILTER_KEY.encode())
    if text is None or footer.get(BLOOM_TYPE_KEY.encode(), TYPE_CODE.encode()) != TYPE_CODE.encode():
        return None
    try:
        bloom = BloomFilter.extendable(text, "the rewritten base file", BLOOM_ENTRIES, BLOOM_FPP, BLOOM_MAX_ENTRIES)
    except CorruptTableError:
        return None
    if bloom is None or bloom.key_count + len(grown.added) > key_count * (1 + STALE_KEYS_ALLOWED):
        return None
    bloom.add_strings(grown.added)
    return bloom


def widened_key_range(previous: Mapping[bytes, bytes] | None,
                      added: pa.ChunkedArray | pa.Array) -> tuple[str, str] | None:
    """The lowest and highest record key of a rewrite that keeps every key of the file whose footer key-value
    metadata is `previous` and adds the keys `added`: the footer's bounds widened by those of the added keys
    (comparing the file's keys again cost a millisecond per 100,000). None where the footer names no bounds or
    one is not ASCII (Java orders other characters by UTF-16 units, Arrow by bytes: the caller compares the
    keys)."""
    low, high = (previous or {}).get(MIN_KEY), (previous or {}).get(MAX_KEY)
    if low is None or high is None or not (low.isascii() and high.isascii()):
        return None
    bounds = (low.decode("ascii"), high.decode("ascii"))
    mm = pc.min_max(added)
    lo, hi = mm["min"].as_py(), mm["max"].as_py()
    if lo is None or hi is None:
        return bounds
    return min(bounds[0], lo), max(bounds[1], hi)


def footer(storage: Storage, rel: str) -> pq.FileMetaData:
    """A base file's footer: its row count, and in its key-value metadata Hudi's keys (schema, key range, bloom
    filter)."""
    with open_base_file(storage, rel) as pf:
        return pf.metadata


def few_valued_strings(metadata: pq.FileMetaData) -> list[str]:
    """Top-level string columns that every row group stores dictionary-encoded in under a byte per value
    (a handful of distinct values: meta columns holding one value per file, partition columns, flags)."""
    if metadata.num_row_groups == 0:
        return []
    schema = metadata.schema
    out = []
    for i in range(len(schema)):
        column = schema.column(i)
        if column.physical_type != "BYTE_ARRAY" or "." in column.path or column.logical_type.type != "STRING":
            continue
        chunks = [metadata.row_group(g).column(i) for g in range(metadata.num_row_groups)]
        if all(c.has_dictionary_page and c.total_uncompressed_size < c.num_values for c in chunks):
            out.append(column.path)
    return out
