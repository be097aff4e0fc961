"""Keeping the metadata table's column_stats partition in step with the data table, as Hudi 1.x's metadata writer
does when `hoodie.metadata.index.column.stats.enable` is on.

Each data instant's metadata deltacommit also writes, per column_stats file group it touches, one log file
(`.col-stats-000N-0_<instant>.log.1_0-0-0`) of HoodieMetadataColumnStats records: for every parquet base file
the instant added, one record per indexed column, built from the file's footer (min, max, null and value counts,
sizes); for every file a clean or rollback deleted, a tombstone per indexed column. Log files get no statistics
(a slice with log files is then always read, by our reader and Hudi's). Keys and file groups are Hudi's
(hudi_ds.metadata.index_keys); the metadata compaction folds each file group into an HFile base file.

Indexed columns: those the table's column_stats index definition lists (hudi_ds.metadata.index_defs), else
Hudi's default selection: the record key, partition path and commit time meta columns, then the data columns in
schema order, at most `MAX_COLUMNS` in all. Either way only columns of scalar types: strings, ints, longs, floats,
doubles, booleans, dates, milli- and microsecond timestamps and decimals (binary, nested and other columns get
none).
"""

from __future__ import annotations

import dataclasses
import datetime
from collections import defaultdict
from collections.abc import Callable, Iterable, Mapping, Sequence
from decimal import Decimal
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ds.config import properties
from hudi_ds.config.table_config import TableConfig, load_config
from hudi_ds.errors import ConfigError
from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.naming import PARTITION_METAFILE, log_file_name, parse_base_file, parse_log_file
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.hfile.avro_records import encode_values
from hudi_ds.log import BlockType, decode_delete_block, read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block
from hudi_ds.metadata import column_stats_codec as codec
from hudi_ds.metadata import records as md
from hudi_ds.metadata.avro_schema import NAMESPACE, metadata_schema_json
from hudi_ds.metadata.column_ranges import FileRanges, footer_ranges
from hudi_ds.metadata.hfiles import encode_encoded_base_file, encode_log_block
from hudi_ds.metadata.index_defs import column_stats_fields, remove_column_stats, set_column_stats_fields
from hudi_ds.metadata.index_keys import column_stats_key, file_group_index
from hudi_ds.metadata.layout import (
    PARTITIONS_KEY,
    WRITE_TOKEN,
    MetadataTable,
    listed_partitions,
    partition_metafile,
)
from hudi_ds.metadata.listing import MetadataSlice, read_slice_files
from hudi_ds.read.schema_resolver import ARROW_SCHEMA_KEY, resolve_schema
from hudi_ds.schema.meta import COMMIT_TIME, PARTITION_PATH, RECORD_KEY, with_meta
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S, PROPS_PATH
from hudi_ds.timeline import Timeline
from hudi_ds.timeline.avro_models import compaction_operation
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat

FILE_GROUPS = 2  # hoodie.metadata.index.column.stats.file.group.count's default
MAX_COLUMNS = 32  # hoodie.metadata.index.column.stats.max.columns.to.index's default
INIT_INSTANT = "00000000000000001"  # the partition's initialising deltacommit, as Hudi names it
_META_INDEXED = (COMMIT_TIME, PARTITION_PATH, RECORD_KEY)
# Hudi 1.1's HoodieValueTypeInfo.typeOrdinal (its ValueType enum's order; boolean, long, string, decimal, date
# and timestamp-micros checked against the reference tables)
_BOOLEAN, _INT, _LONG, _FLOAT, _DOUBLE, _STRING = 2, 3, 4, 5, 6, 7
_DECIMAL, _DATE, _TIMESTAMP_MILLIS, _TIMESTAMP_MICROS = 10, 12, 15, 16


def file_group_ids(partition: str = md.COLUMN_STATS) -> list[str]:
    """The file groups of an index partition: column_stats's two, partition_stats's one (Hudi's defaults)."""
    if partition == md.PARTITION_STATS:
        return ["partition-stats-0000-0"]
    return [f"col-stats-{i:04d}-0" for i in range(FILE_GROUPS)]


def _value_type(typ: pa.DataType) -> tuple[str, int] | None:
    """The wrapper record and value type ordinal of a column type, None for a type not indexed."""
    if pa.types.is_string(typ) or pa.types.is_large_string(typ):
        return "StringWrapper", _STRING
    if pa.types.is_int64(typ):
        return "LongWrapper", _LONG
    if pa.types.is_int32(typ):
        return "IntWrapper", _INT
    if pa.types.is_float32(typ):
        return "FloatWrapper", _FLOAT
    if pa.types.is_float64(typ):
        return "DoubleWrapper", _DOUBLE
    if pa.types.is_boolean(typ):
        return "BooleanWrapper", _BOOLEAN
    if pa.types.is_date32(typ):
        return "IntWrapper", _DATE
    if pa.types.is_timestamp(typ) and typ.unit in ("ms", "us"):
        return "LongWrapper", _TIMESTAMP_MICROS if typ.unit == "us" else _TIMESTAMP_MILLIS
    if pa.types.is_decimal(typ):
        return "BytesWrapper", _DECIMAL
    return None


def indexed_columns(schema: pa.Schema, listed: Sequence[str] | None = None) -> list[str]:
    """The columns of `schema` (meta columns included) that get statistics: those of `listed` (the table's
    column_stats definition) it has, else Hudi's default selection."""
    if listed is not None:
        return [c for c in listed if c in schema.names and _value_type(schema.field(c).type) is not None]
    names = [c for c in _META_INDEXED if c in schema.names]
    names += [f.name for f in schema if f.name not in with_meta(pa.schema([])).names
              and _value_type(f.type) is not None]
    return names[:MAX_COLUMNS]


def _plain(value: Any, typ: pa.DataType) -> Any:
    """A parquet statistics bound (pyarrow's logical value) as the wrapper's value."""
    if pa.types.is_date32(typ):
        return (value - datetime.date(1970, 1, 1)).days
    if pa.types.is_timestamp(typ):
        return pa.scalar(value, typ).cast(pa.int64()).as_py()
    if pa.types.is_decimal(typ):
        unscaled = int(Decimal(value).scaleb(typ.scale))
        return unscaled.to_bytes(unscaled.bit_length() // 8 + 1, "big", signed=True)
    return value


def _stats_record(key: str, stats: dict[str, Any], version: int) -> dict[str, Any]:
    return stats_record(key, md.RecordType.COLUMN_STATS, stats, version)


def file_ranges(metadata: pq.FileMetaData) -> FileRanges:
    """The column ranges of a parquet base file's footer, of the columns column_stats can hold."""
    return footer_ranges(metadata, is_indexed_type)


def file_records(partition: str, file_name: str, ranges: FileRanges, columns: Iterable[str],
                 version: int) -> dict[str, dict[str, Any]]:
    """The column_stats records of one parquet base file, from its column ranges (see file_ranges): one per
    column of `columns` whose range is known."""
    by_name = {r.column: r for r in ranges}
    out: dict[str, dict[str, Any]] = {}
    for column in columns:
        r = by_name.get(column)
        if r is None or r.nulls is None:
            continue
        stats = column_range(file_name, column, r.type, r.low, r.high, r.values, r.nulls, r.total_size,
                             r.uncompressed_size)
        key = column_stats_key(partition, file_name, column)
        out[key] = _stats_record(key, stats, version)
    return out


def column_range(file_name: str, column: str, typ: pa.DataType, low: Any, high: Any, values: int, nulls: int,
                 total_size: int | None, uncompressed_size: int | None) -> dict[str, Any]:
    """A HoodieMetadataColumnStats of one column of an indexed type, its bounds given as pyarrow's logical
    values (None when every value is null)."""
    kind = _value_type(typ)
    assert kind is not None, typ
    wrapper = f"{NAMESPACE}.{kind[0]}"
    return {
        "fileName": file_name, "columnName": column,
        "minValue": None if low is None else (wrapper, {"value": _plain(low, typ)}),
        "maxValue": None if high is None else (wrapper, {"value": _plain(high, typ)}),
        "valueCount": values, "nullCount": nulls, "totalSize": total_size,
        "totalUncompressedSize": uncompressed_size, "isDeleted": False, "isTightBound": False,
        "valueType": {"typeOrdinal": kind[1], "additionalInfo": None},
    }


def is_indexed_type(typ: pa.DataType) -> bool:
    return _value_type(typ) is not None


def stats_record(key: str, record_type: md.RecordType, stats: dict[str, Any], version: int) -> dict[str, Any]:
    """A column_stats or partition_stats record; version 8 tables' records have no valueType (Hudi 1.0's
    schema)."""
    return md.column_stats_record(key, record_type, stats if version >= 9
                                  else {k: v for k, v in stats.items() if k != "valueType"})


def tombstones(partition: str, file_name: str, columns: Iterable[str], version: int) -> dict[str, dict[str, Any]]:
    """Records deleting the statistics of a removed file."""
    out = {}
    for column in columns:
        key = column_stats_key(partition, file_name, column)
        out[key] = _stats_record(key, {
            "fileName": file_name, "columnName": column, "minValue": None, "maxValue": None, "valueCount": None,
            "nullCount": None, "totalSize": None, "totalUncompressedSize": None, "isDeleted": True,
            "isTightBound": False, "valueType": None}, version)
    return out


def _foreign_writes(data_timeline: Timeline) -> Callable[[str], bool]:
    """Whether the instant wrote its files with another engine than hudi-py: Apache Hudi 1.x keeps column
    statistics of the log files it writes too (hudi-py of base files only), so deleting such a log file removes
    its entries. An instant no longer on the active timeline counts as foreign (a tombstone of nothing is harmless)."""
    seen: dict[str, bool] = {}

    def foreign(instant: str) -> bool:
        if instant not in seen:
            inst = data_timeline.find(instant)
            seen[instant] = inst is None or ARROW_SCHEMA_KEY not in (
                data_timeline.commit_metadata(inst).extra_metadata or {})
        return seen[instant]
    return foreign


def _foreign_log(partition: str, name: str, foreign: Callable[[str], bool]) -> bool:
    log = parse_log_file(partition, name)
    return log is not None and foreign(log.instant)


def is_parquet_base(partition: str, name: str) -> bool:
    return name.endswith(".parquet") and parse_base_file(partition, name) is not None


def ranges_schema(ranges: FileRanges) -> pa.Schema:
    """The schema of a file's columns of indexed types, as indexed_columns selects among them."""
    return pa.schema([pa.field(r.column, r.type) for r in ranges])


def base_file_ranges(data_storage: Storage, partition: str, name: str) -> FileRanges:
    """The column ranges of a committed parquet base file, read from its footer."""
    with open_base_file(data_storage, f"{partition}/{name}" if partition else name) as pf:
        return file_ranges(pf.metadata)


def added_file_records(data_storage: Storage, version: int, added: Mapping[str, Iterable[str]],
                       listed: Sequence[str] | None,
                       reported: Mapping[str, Mapping[str, FileRanges]] | None = None
                       ) -> dict[str, dict[str, dict[str, Any]]]:
    """Partition -> the column_stats records of the parquet base files `added` (partition -> file names), of
    the columns `listed` (see indexed_columns): from the ranges their write tasks `reported` (partition -> file
    name -> ranges), else from their footers."""
    out: dict[str, dict[str, dict[str, Any]]] = {}
    for partition, names in added.items():
        known = (reported or {}).get(partition, {})
        for name in names:
            if is_parquet_base(partition, name):
                ranges = known.get(name)
                if ranges is None:
                    ranges = base_file_ranges(data_storage, partition, name)
                out.setdefault(partition, {}).update(
                    file_records(partition, name, ranges, indexed_columns(ranges_schema(ranges), listed), version))
    return out


def change_records(data_storage: Storage, data_timeline: Timeline, version: int,
                   added: Mapping[str, Mapping[str, dict[str, Any]]],
                   deleted: Mapping[str, Iterable[str]], listed: Sequence[str] | None) -> dict[str, dict[str, Any]]:
    """The column_stats records of one data instant: those of the parquet base files it added (partition ->
    their records, from added_file_records), tombstones of the files it deleted (partition -> file names)."""
    out: dict[str, dict[str, Any]] = {}
    for records in added.values():
        out.update(records)
    foreign = _foreign_writes(data_timeline)
    gone = {p: [n for n in names if is_parquet_base(p, n) or _foreign_log(p, n, foreign)]
            for p, names in deleted.items()}
    if any(gone.values()):
        data = resolve_schema(load_config(data_storage), data_timeline)
        columns = indexed_columns(with_meta(data if data is not None else pa.schema([])), listed)
        for partition, names in gone.items():
            for name in names:
                out.update(tombstones(partition, name, columns, version))
    return out


def write_logs(mdt: MetadataTable, instant: str, records: Mapping[str, dict[str, Any]],
               base_instant: str, partition: str = md.COLUMN_STATS) -> list[WriteStat]:
    """One log file per file group of the index `partition` that `records` fall in, written by the deltacommit
    `instant`; their write stats."""
    ids = file_group_ids(partition)
    groups: dict[int, dict[str, dict[str, Any]]] = defaultdict(dict)
    for key, record in records.items():
        groups[file_group_index(key, len(ids))][key] = record
    if not groups:
        return []
    _ensure_partition(mdt, instant, partition)
    stats = []
    for index, group in sorted(groups.items()):
        name = log_file_name(ids[index], instant, 1, WRITE_TOKEN)
        data = encode_log_block(group, mdt.version, instant, encoder=codec.encoder(mdt.version))
        mdt.storage.write_bytes(f"{partition}/{name}", data)
        stats.append(WriteStat(
            file_id=ids[index], path=f"{partition}/{name}", prev_commit=base_instant or "null",
            num_writes=len(group), num_update_writes=len(group), total_write_bytes=len(data),
            partition_path=partition, file_size_in_bytes=len(data), is_log=True, log_version=1,
            base_file="", log_files=[name], total_log_blocks=1, total_log_records=len(group)))
    return stats


def _ensure_partition(mdt: MetadataTable, instant: str, partition: str = md.COLUMN_STATS) -> None:
    rel = f"{partition}/{PARTITION_METAFILE}"
    if not mdt.storage.exists(rel):
        mdt.storage.put_if_absent(rel, partition_metafile(instant))


def is_maintained(data_storage: Storage) -> bool:
    """Whether the data table's hoodie.properties (read afresh) lists column_stats."""
    return md.COLUMN_STATS in listed_partitions(data_storage)


def written_by(mdt: MetadataTable, instant: str, partition: str = md.COLUMN_STATS) -> list[str]:
    """The files of the index `partition` the metadata instant `instant` wrote (a deltacommit's logs or a
    compaction's base files)."""
    if not mdt.storage.exists(partition):
        return []
    out = []
    for e in mdt.storage.list(partition):
        ref = parse_log_file(partition, e.name) or parse_base_file(partition, e.name)
        if ref is not None and ref.instant == instant:
            out.append(e.path)
    return out


def _file_id(sl: MetadataSlice, partition: str) -> str | None:
    rel = sl.base or (sl.logs[0][0] if sl.logs else None)
    if rel is None:
        return None
    name = rel.rsplit("/", 1)[-1]
    ref = parse_base_file(partition, name) or parse_log_file(partition, name)
    return None if ref is None else ref.file_id


def compaction_operations(slices: list[MetadataSlice], partition: str = md.COLUMN_STATS) -> list[dict[str, Any]]:
    """The compaction plan's operations for the file groups of the index `partition`."""
    out = []
    for sl in slices:
        file_id = _file_id(sl, partition)
        if file_id is not None:
            out.append(compaction_operation(sl.base_instant, file_id, partition,
                                            sl.base.rsplit("/", 1)[-1] if sl.base else None,
                                            [rel.rsplit("/", 1)[-1] for rel, _ in sl.logs]))
    return out


def _compacted_entries(mdt: MetadataTable, sl: MetadataSlice) -> tuple[pa.Array, pa.Array]:
    """The HFile keys and values of a slice's merged records (HoodieMetadataPayload's merge): the base file's
    entries no log touches pass as the bytes they are (the bulk of a compaction, never decoded); the touched
    ones and the logs' are merged as records and encoded."""
    rels = ([sl.base] if sl.base is not None else []) + [rel for rel, _ in sl.logs]
    fetched = dict(zip(rels, read_slice_files(mdt, rels), strict=True))
    decoder = codec.decoder(mdt.version)
    updates: list[tuple[str, dict[str, Any] | None]] = []
    for rel, _ in sl.logs:
        where = mdt.storage.full(rel)
        for block in read_blocks(fetched[rel], where):
            if block.block_type == BlockType.HFILE_DATA:
                updates.extend(decode_hfile_data_block(block, where, decoder))
            elif block.block_type == BlockType.DELETE:
                updates.extend((k, None) for k in decode_delete_block(block, where).record_keys.to_pylist())
    touched = {key.encode("utf-8") for key, _ in updates}
    kept_keys: list[bytes] = []
    kept_values: list[bytes] = []
    base: list[tuple[str, dict[str, Any]]] = []
    if sl.base is not None:
        reader = AvroHFileReader(fetched[sl.base], mdt.storage.full(sl.base), decoder=decoder)
        for key, value in reader.hfile:
            if key in touched:
                base.append((key.decode("utf-8"), reader.record(key, value)))
            else:
                kept_keys.append(key)
                kept_values.append(value)
    merged_keys, merged_values = encode_values(md.merge(base, updates), metadata_schema_json(mdt.version),
                                               codec.encoder(mdt.version))
    keys = pa.concat_arrays([pa.array(kept_keys, pa.binary()).cast(pa.string()), merged_keys])
    return keys, pa.concat_arrays([pa.array(kept_values, pa.binary()), merged_values])


def compact(mdt: MetadataTable, slices: list[MetadataSlice], instant: str,
            partition: str = md.COLUMN_STATS) -> list[WriteStat]:
    """The compaction at `instant` of the file groups of the index `partition`: each slice's merged records
    into an HFile base file (`col-stats-000N-0_0-0-0_<instant>.hfile`, `partition-stats-0000-0_...`)."""
    stats = []
    for sl in slices:
        file_id = _file_id(sl, partition)
        if file_id is None:
            continue
        keys, values = _compacted_entries(mdt, sl)
        base = f"{file_id}_{WRITE_TOKEN}_{instant}.hfile"
        data = encode_encoded_base_file(keys, values, mdt.version)
        mdt.storage.write_bytes(f"{partition}/{base}", data)
        stats.append(WriteStat(file_id=file_id, path=f"{partition}/{base}",
                               prev_commit=sl.base_instant or "null", num_writes=len(keys),
                               total_write_bytes=len(data), partition_path=partition,
                               file_size_in_bytes=len(data), total_log_files_compacted=len(sl.logs)))
    return stats


# ------------------------------------------------------------------------------------ enabling and dropping


def set_listed(storage: Storage, partitions: list[str]) -> None:
    props = properties.loads(properties.decode_bytes(storage.read_bytes(PROPS_PATH)))
    props[PARTITIONS_KEY] = ",".join(partitions)
    storage.write_bytes(PROPS_PATH, properties.dumps(props, "Updated by hudi_ds").encode("latin-1",
                                                                                         "backslashreplace"))


# the committed files (partition -> names), the data timeline and the index definition's columns -> the records
Builder = Callable[[Mapping[str, list[str]], Timeline, Sequence[str] | None], Mapping[str, dict[str, Any]]]


def bootstrap_index(storage: Storage, config: TableConfig, partition: str, init_instant: str,
                    build: Builder) -> None:
    """Build the index `partition` (column_stats or partition_stats) from the committed files: what a killed
    bootstrap left cleared, the records `build` gives written by the partition's initialising deltacommit
    `init_instant`, then the partition added to hoodie.table.metadata.partitions (a bootstrap killed before
    that is redone)."""
    from hudi_ds.metadata.bootstrap import committed_files

    mdt = MetadataTable.open(storage)
    writer = mdt.fmt.timeline_writer(mdt.storage)
    mdt.storage.delete_dir(partition)
    writer.delete_instant_files(init_instant, "deltacommit")
    timeline = config.format.load_timeline(storage)
    committed = {p: list(f) for p, f in committed_files(storage, timeline).items()}
    records = build(committed, timeline, column_stats_fields(storage))
    writer.create_requested(init_instant, "deltacommit")
    writer.transition_to_inflight(init_instant, "deltacommit")
    _ensure_partition(mdt, init_instant, partition)
    stats = write_logs(mdt, init_instant, records, "", partition)
    meta = CommitMetadata(partition_to_write_stats={partition: stats}, operation_type="BULK_INSERT")
    writer.complete(init_instant, "deltacommit", mdt.fmt.encode_commit_metadata(meta, "deltacommit"))
    set_listed(storage, sorted({*listed_partitions(storage), partition}))


def _bootstrap(storage: Storage, config: TableConfig) -> None:
    """Statistics of every committed parquet base file into the partition's initialising deltacommit."""
    def build(committed: Mapping[str, list[str]], timeline: Timeline,
              listed: Sequence[str] | None) -> Mapping[str, dict[str, Any]]:
        return change_records(storage, timeline, config.version,
                              added_file_records(storage, config.version, committed, listed), {}, listed)

    bootstrap_index(storage, config, md.COLUMN_STATS, INIT_INSTANT, build)


def _drop(storage: Storage) -> None:
    """Drop column_stats and partition_stats with it (Hudi builds partition statistics from column_stats)."""
    dropped = (md.COLUMN_STATS, md.PARTITION_STATS)
    set_listed(storage, [p for p in listed_partitions(storage) if p not in dropped])
    mdt = MetadataTable.open(storage)
    for partition in dropped:
        mdt.storage.delete_dir(partition)
    remove_column_stats(storage)


def rebuild_after_version_change(storage: Storage, config: TableConfig) -> TableConfig:
    """Build column_stats again once a version change rebuilt the metadata table it dropped (the caller holds
    the commit lock); a crash before this leaves the table without it, as the option unset keeps it."""
    listed = listed_partitions(storage)
    if md.FILES not in listed or md.COLUMN_STATS in listed:
        return config
    _bootstrap(storage, config)
    return load_config(storage)


def planned_config(config: TableConfig, enable: bool | None) -> TableConfig:
    """The config as hoodie.metadata.index.column.stats.enable will make it; ConfigError when the table has
    (or will have) no metadata table to hold the partition."""
    if enable is None:
        return config
    if enable and md.FILES not in config.metadata_partitions:
        raise ConfigError("hoodie.metadata.index.column.stats.enable=true needs the metadata table: set "
                          "hoodie.metadata.enable=true too (version 8 and 9 tables)")
    partitions = sorted({*config.metadata_partitions, md.COLUMN_STATS} if enable
                        else set(config.metadata_partitions) - {md.COLUMN_STATS, md.PARTITION_STATS})
    return dataclasses.replace(config, metadata_partitions=partitions)


def apply_setting(storage: Storage, config: TableConfig, enable: bool | None) -> TableConfig:
    """Make the column_stats partition follow hoodie.metadata.index.column.stats.enable: True builds it from
    the committed files, False drops it, None keeps what the table has. Returns the config afterwards."""
    planned_config(config, enable)
    return follow_setting(storage, config, enable, is_maintained, _bootstrap, _drop)


def follow_setting(storage: Storage, config: TableConfig, enable: bool | None,
                   maintained: Callable[[Storage], bool], build: Callable[[Storage, TableConfig], None],
                   drop: Callable[[Storage], None]) -> TableConfig:
    """Build (True) or drop (False) a metadata-table index partition unless it already is as `enable` says,
    under the commit lock, checked again once held (another writer may have done it); None keeps it."""
    if enable is None or enable == maintained(storage):
        return config
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        if enable != maintained(storage):
            if enable:
                build(storage, config)
            else:
                drop(storage)
    return load_config(storage)


# ------------------------------------------------------------------------------------ the column list


def listed_columns(column_list: str, known: Iterable[str] | None, populate_meta_fields: bool) -> list[str]:
    """The columns hoodie.metadata.index.column.stats.column.list asks for, as Hudi records them: the commit
    time, partition path and record key meta columns (on tables that populate them), then the listed data
    columns; ConfigError naming a listed column that is not among the table's columns `known` (None: no schema
    yet)."""
    names = list(dict.fromkeys(c.strip() for c in column_list.split(",") if c.strip()))
    if known is not None:
        unknown = [c for c in names if c not in {*known, *_META_INDEXED}]
        if unknown:
            raise ConfigError(f"hoodie.metadata.index.column.stats.column.list names {', '.join(unknown)}, which "
                              "the table has no column of; list columns of the table's schema (comma-separated)")
    meta = sorted(_META_INDEXED) if populate_meta_fields else []
    return meta + [c for c in names if c not in _META_INDEXED]


def apply_column_list(storage: Storage, config: TableConfig, column_list: str | None, enable: bool | None,
                      known: Iterable[str] | None) -> None:
    """Record hoodie.metadata.index.column.stats.column.list as the table's column_stats definition when the
    table keeps (or this write turns on) column_stats, before anything is written (and check the recorded
    definition even when the option is unset): the partition's next
    records, ours and Hudi's readers' use, follow it. Files indexed before keep the statistics they have (Hudi
    updates the definition the same way, without rebuilding the partition)."""
    if enable is False or not (enable or is_maintained(storage)):
        return
    recorded = column_stats_fields(storage)  # a corrupt definitions file is refused before anything is written
    if not column_list or not column_list.strip():
        return
    columns = listed_columns(column_list, known, config.populate_meta_fields)
    if recorded == columns:
        return
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        set_column_stats_fields(storage, config.version, columns)
