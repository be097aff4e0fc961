"""Writes one file group's share of a commit: a new base file, a log file, or (COW) a rewritten base.

Every data file is announced by a marker (files/markers.py) before it is written, so a rollback can remove
exactly what a failed instant wrote.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime, timezone

import pyarrow as pa

from hudi_ds import faults
from hudi_ds.errors import CorruptTableError
from hudi_ds.files.base_file import GrownFilter, open_base_file, write_base_file
from hudi_ds.files.encoding import dictionary_columns
from hudi_ds.files.markers import write_marker
from hudi_ds.files.naming import PARTITION_METAFILE, base_file_name, join, log_file_name, parse_base_file
from hudi_ds.keys.virtual_keys import blank_meta, computed_meta
from hudi_ds.log.blocks import encode_avro_data_block, encode_delete_block, encode_parquet_data_block
from hudi_ds.metadata.column_stats_sync import file_ranges
from hudi_ds.metadata.records import COLUMN_STATS, PARTITION_STATS
from hudi_ds.read.conform import conform
from hudi_ds.schema.avro import arrow_to_avro
from hudi_ds.schema.meta import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
    with_meta,
)
from hudi_ds.schema.strings import constant_dictionary, constant_strings, numbered_strings
from hudi_ds.storage import Storage
from hudi_ds.table_format import TableFormat
from hudi_ds.write.messages import WrittenFile
from hudi_ds.write.plan import WritePlan


def ensure_partition_metadata(storage: Storage, partition: str, instant: str) -> None:
    rel = join(partition, PARTITION_METAFILE)
    if storage.exists(rel):
        return
    depth = len(partition.split("/")) if partition else 0
    now = datetime.now(timezone.utc).strftime("%a %b %d %H:%M:%S UTC %Y")
    text = f"#partition metadata\n#{now}\ncommitTime={instant}\npartitionDepth={depth}\n"
    storage.put_if_absent(rel, text.encode())


def read_base(storage: Storage, rel: str, schema: pa.Schema, virtual_keys: tuple[str, ...] | None = None,
              keep_dictionaries: frozenset[str] = frozenset()) -> pa.Table:
    """A base file's rows as `schema` (meta columns included), whatever schema version wrote it; with
    `virtual_keys` (the record key fields of a table without meta fields), the meta columns computed.
    `keep_dictionaries`: columns the file stores as small dictionaries stay Arrow dictionaries (a rewrite
    merges and writes them as read, without decoding and hashing every row's string again)."""
    return read_base_and_footer(storage, rel, schema, virtual_keys, keep_dictionaries)[0]


def read_base_and_footer(storage: Storage, rel: str, schema: pa.Schema,
                         virtual_keys: tuple[str, ...] | None = None,
                         keep_dictionaries: frozenset[str] = frozenset()) -> tuple[pa.Table, dict[bytes, bytes]]:
    """read_base, and the file's footer key-value metadata (Hudi's key range and bloom filter, which a rewrite
    carries forward) from the same read: no second open of the file (a request more on an object store)."""
    with open_base_file(storage, rel, few_valued_as_dictionary=bool(keep_dictionaries),
                        pre_buffer=storage.read_ahead) as pf:
        table = pf.read()
        kv = pf.metadata.metadata or {}
    if keep_dictionaries:
        return conform(table, schema, rel, keep_dictionaries), kv
    if virtual_keys is not None:
        partition, _, name = rel.rpartition("/")
        parsed = parse_base_file(partition, name)
        if parsed is None:
            raise CorruptTableError(f"{rel} is not named as a base file: restore it, or roll back its commit")
        table = computed_meta(table, virtual_keys, partition, parsed.instant, name)
    return conform(table, schema, rel), kv


def _avro_primitive(avro_schema: dict, field_name: str | None) -> str | None:
    if field_name is None:
        return None
    for f in avro_schema["fields"]:
        if f["name"] == field_name:
            types = f["type"] if isinstance(f["type"], list) else [f["type"]]
            for t in types:
                if t != "null":
                    return t if isinstance(t, str) else str(t.get("type"))
    return None


# files with fewer rows do not judge for the others (their sample says little about the task's sizeable files)
_JUDGE_ROWS = 1024


@dataclass(frozen=True)
class GroupWriteContext:
    """What every file written in one task of one instant shares."""

    storage: Storage
    instant: str
    write_token: str
    task_id: int
    schema: pa.Schema  # full schema: meta columns + data columns
    avro_schema: dict
    ordering_field: str | None
    ordering_avro_type: str | None
    log_block_format: str
    compression: str
    table_format: TableFormat
    bloom_filters: bool = False
    virtual_keys: tuple[str, ...] | None = None  # hoodie.populate.meta.fields=false: the record key fields
    # whether base files report their column ranges (the metadata table's column_stats and partition_stats take
    # them; should the table start keeping either meanwhile, the commit reads the footers instead)
    column_ranges: bool = True
    _dictionary: dict[tuple[str, ...], list[str]] = field(default_factory=dict, compare=False, repr=False)
    _small_dictionary: dict[tuple[str, ...], list[str]] = field(default_factory=dict, compare=False, repr=False)

    @classmethod
    def for_plan(cls, storage: Storage, plan: WritePlan, task_id: int, write_token: str) -> GroupWriteContext:
        full = with_meta(plan.schema)
        avro = arrow_to_avro(full, plan.config.name)
        return cls(storage=storage, instant=plan.instant, write_token=write_token, task_id=task_id, schema=full,
                   avro_schema=avro, ordering_field=plan.ordering_field,
                   ordering_avro_type=_avro_primitive(avro, plan.ordering_field),
                   log_block_format=plan.log_block_format, compression=plan.parquet_compression,
                   table_format=plan.config.format, bloom_filters=plan.bloom_filters,
                   virtual_keys=None if plan.config.populate_meta_fields else tuple(plan.config.record_key_fields),
                   column_ranges=bool({COLUMN_STATS, PARTITION_STATS} & set(plan.config.metadata_partitions)))

    @property
    def natural_deletes(self) -> bool:
        """Deletes carry Hudi's "no event time" ordering value 0, as Spark writes them: every engine then
        agrees that a delete removes what was committed before it. hudi-rs 0.5 mis-decodes long ordering
        values of 2^31 and more in delete blocks, and it has no natural marker for non-integer types, so
        only string/float ordering fields carry the delete's own ordering value."""
        return self.ordering_avro_type in (None, "int", "long")

    def with_meta(self, data: pa.Table, file_name: str, first_seq: int, partition: str,
                  dictionary: bool = False) -> pa.Table:
        """Data rows (record key attached) of one file group in `partition`, with the five meta columns filled.

        With `dictionary` (rows of a new base file), the columns holding one value per file (commit time,
        partition path, file name) stay dictionary-encoded: parquet writes them as such, identical on disk,
        without building millions of copies of one string. Other uses (log blocks, merges) need plain strings."""
        n = data.num_rows
        seq = numbered_strings(f"{self.instant}_{self.task_id}_", first_seq, n) if self.virtual_keys is None \
            else pa.nulls(n, pa.string())  # no file keeps it (hudi_ds.keys.virtual_keys)
        const = constant_dictionary if dictionary else constant_strings
        meta = {
            COMMIT_TIME: const(self.instant, n),
            COMMIT_SEQNO: seq,
            RECORD_KEY: data[RECORD_KEY],
            PARTITION_PATH: const(partition, n),
            FILE_NAME: const(file_name, n),
        }
        cols = [meta[name] for name in META_COLUMNS]
        for column in self.schema:
            if column.name in meta:
                continue
            cols.append(data[column.name] if column.name in data.column_names else pa.nulls(n, column.type))
        schema = pa.schema([f.with_type(c.type) for f, c in zip(self.schema, cols, strict=True)],
                           metadata=self.schema.metadata)
        return pa.Table.from_arrays(cols, schema=schema)

    def dictionary_columns(self, records: pa.Table) -> list[str]:
        """Columns to dictionary-encode, judged on the task's first sizeable file and reused for the rest (its
        files hold the same kind of rows; judging costs about as much as writing a small log block). Until a
        sizeable file comes, small ones reuse the judgement of the first small one (a micro-batch of a few rows
        writes a small log block to each of its file groups)."""
        key = tuple(records.column_names)
        known = self._dictionary.get(key)
        if known is not None:
            return known
        small = records.num_rows < _JUDGE_ROWS
        if small and key in self._small_dictionary:
            return self._small_dictionary[key]
        chosen = dictionary_columns(records)
        (self._small_dictionary if small else self._dictionary)[key] = chosen
        return chosen

    def write_base(self, partition: str, file_id: str, bucket: int, records: pa.Table, prev_commit: str,
                   inserts: int, updates: int, is_merge: bool = False, grown_filter: GrownFilter | None = None,
                   key_range: tuple[str, str] | None = None) -> WrittenFile:
        """A parquet base file with `records` (meta columns included) in the file group (`grown_filter`: its
        bloom filter grown from the one of the file it rewrites; `key_range`: its lowest and highest key, if
        known)."""
        name = base_file_name(file_id, self.write_token, self.instant)
        virtual = self.virtual_keys is not None
        size, footer = write_base_file(self.storage, self.instant, partition, name,
                                       blank_meta(records) if virtual else records, self.avro_schema,
                                       compression=self.compression, dictionary=self.dictionary_columns(records),
                                       merge=is_merge, bloom_filter=self.bloom_filters, key_footer=not virtual,
                                       grown_filter=grown_filter, key_range=key_range)
        return WrittenFile(partition, file_id, bucket, join(partition, name), False, prev_commit, name, 0,
                           records.num_rows, inserts, updates, 0, size,
                           column_ranges=file_ranges(footer) if self.column_ranges else None)

    def write_log(self, partition: str, file_id: str, bucket: int, slice_instant: str, base_file: str,
                  version: int, data: pa.Table | None, deletes: pa.Table | None,
                  partial_columns: tuple[str, ...] = ()) -> WrittenFile:
        """A new log file with a data block (records with meta columns) and/or a delete block. The file is
        created only if its name is free: a writer racing on the same file group took the version, so this one
        takes the next (the commit then fails on the conflict, and nothing of the other writer is touched).
        `partial_columns`: the data block holds a KEEP_VALUES partial update of these columns (IS_PARTIAL)."""
        blocks = []
        writes = 0
        if data is not None and data.num_rows:
            data = data.set_column(
                META_COLUMNS.index(FILE_NAME), FILE_NAME, constant_strings(file_id, data.num_rows)
            )
            avro = self.avro_schema
            if partial_columns:
                carried = set(META_COLUMNS) | set(partial_columns)
                data = data.select([c for c in data.column_names if c in carried])
                avro = {**avro, "fields": [f for f in avro["fields"] if f["name"] in carried]}
            partial = bool(partial_columns)
            if self.log_block_format == "avro":
                blocks.append(encode_avro_data_block(data, avro, self.instant, partial))
            else:
                blocks.append(encode_parquet_data_block(data, avro, self.instant, self.compression,
                                                        self.dictionary_columns(data), partial))
            writes = data.num_rows
        n_del = 0
        if deletes is not None and deletes.num_rows:
            n_del = deletes.num_rows
            ordering = (
                [0] * n_del if self.natural_deletes or self.ordering_field not in deletes.column_names
                else deletes[self.ordering_field].to_pylist()
            )
            blocks.append(
                encode_delete_block(
                    deletes[RECORD_KEY].to_pylist(), [partition] * n_del, ordering,
                    self.ordering_avro_type, self.instant,
                )
            )
        payload = b"".join(blocks)
        while True:
            named = self.table_format.log_instant(slice_instant, self.instant)
            rel = join(partition, log_file_name(file_id, named, version, self.write_token))
            write_marker(self.storage, self.instant, rel, self.table_format.log_marker)
            if self.storage.put_if_absent(rel, payload):
                break
            version += 1
        faults.file_written()
        base_name = base_file.rsplit("/", 1)[-1] if base_file else ""
        return WrittenFile(partition, file_id, bucket, rel, True, slice_instant, base_name, version,
                           writes, 0, writes, n_del, len(payload), len(blocks))

