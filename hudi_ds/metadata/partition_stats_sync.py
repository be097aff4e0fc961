"""Keeping the metadata table's partition_stats partition in step with the data table: one
HoodieMetadataColumnStats record per (data partition, indexed column), its `fileName` the partition path, in one
file group `partition-stats-0000-0` (Hudi's default count), kept beside column_stats (Hudi requires both).

Each data instant's deltacommit writes, for every data partition it added files to, a record per indexed column
covering the values of those files: parquet base files from their footers (the column_stats records of the same
instant; a column without footer statistics from its values), log files from their decoded data blocks (Hudi's reader prunes a partition on these statistics, log
files included). These records are not tight bounds (`isTightBound` false), so the metadata payload's merge
widens the partition's range and adds up its counts: the range always covers every live value, as readers need,
but does not shrink when an update, delete, clean or replace removes the extreme values (Hudi 1.x recomputes a
tight bound from the partition's column_stats on each commit instead). Deletions of files (clean, rollback)
leave the partition's range as it is, as Hudi's clean does. Building the partition from the committed files
writes tight bounds.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import ConfigError
from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.naming import parse_log_file
from hudi_ds.log import BlockType, decode_avro_data_block, decode_parquet_data_block, read_blocks
from hudi_ds.metadata import records as md
from hudi_ds.metadata.column_ranges import FileRanges
from hudi_ds.metadata.column_stats_sync import (
    added_file_records,
    base_file_ranges,
    bootstrap_index,
    column_range,
    follow_setting,
    indexed_columns,
    is_indexed_type,
    is_parquet_base,
    ranges_schema,
    set_listed,
    stats_record,
)
from hudi_ds.metadata.index_keys import partition_stats_key
from hudi_ds.metadata.layout import MetadataTable, listed_partitions
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline

INIT_INSTANT = "00000000000000003"  # the partition's initialising deltacommit, as Hudi names it
_STATS = "ColumnStatsMetadata"


def table_stats(file_name: str, table: pa.Table, columns: Iterable[str]) -> list[dict[str, Any]]:
    """The HoodieMetadataColumnStats of `columns` (those of an indexed type) of a file's rows `table`."""
    out = []
    for column in columns:
        values = table.column(column)
        if not is_indexed_type(values.type):
            continue
        bounds = pc.min_max(values).as_py() if len(values) > values.null_count else {"min": None, "max": None}
        out.append(column_range(file_name, column, values.type, bounds["min"], bounds["max"], len(values),
                                values.null_count, None, None))
    return out


def log_file_stats(data_storage: Storage, partition: str, name: str,
                   listed: Sequence[str] | None) -> list[dict[str, Any]]:
    """The statistics of the indexed columns (see indexed_columns) of one log file's data blocks (delete and
    command blocks carry no values)."""
    rel = f"{partition}/{name}" if partition else name
    tables = []
    for block in read_blocks(data_storage.read_bytes(rel), data_storage.full(rel)):
        if block.block_type == BlockType.AVRO_DATA:
            tables.append(decode_avro_data_block(block, rel))
        elif block.block_type == BlockType.PARQUET_DATA:
            tables.append(decode_parquet_data_block(block, rel))
    if not tables:
        return []
    table = pa.concat_tables(tables, promote_options="permissive")
    return table_stats(name, table, indexed_columns(table.schema, listed))


def base_file_stats(data_storage: Storage, partition: str, name: str, footer_stats: Iterable[dict[str, Any]],
                    listed: Sequence[str] | None, ranges: FileRanges | None = None) -> list[dict[str, Any]]:
    """The statistics of the indexed columns of one parquet base file: `footer_stats` (its column_stats), and
    for the columns its `ranges` (read from its footer when not given) have no statistics of the values read
    from the file, so that the partition's range covers them too."""
    out = list(footer_stats)
    if ranges is None:
        ranges = base_file_ranges(data_storage, partition, name)
    have = {s["columnName"] for s in out}
    missing = [c for c in indexed_columns(ranges_schema(ranges), listed) if c not in have]
    if missing:
        with open_base_file(data_storage, f"{partition}/{name}" if partition else name) as pf:
            out += table_stats(name, pf.read(columns=missing), missing)
    return out


def _partition_record(partition: str, stats: dict[str, Any], version: int) -> dict[str, Any]:
    key = partition_stats_key(partition, stats["columnName"])
    return stats_record(key, md.RecordType.PARTITION_STATS,
                        {**stats, "fileName": md.partition_key(partition), "isTightBound": False}, version)


def partition_records(version: int, file_stats: Mapping[str, Iterable[dict[str, Any]]],
                      tight: bool = False) -> dict[str, dict[str, Any]]:
    """The partition_stats records of files' statistics (partition -> HoodieMetadataColumnStats of its files):
    per partition and column, the widest range and the summed counts (HoodieMetadataPayload's merge)."""
    out: dict[str, dict[str, Any]] = {}
    for partition, entries in file_stats.items():
        for stats in entries:
            record = _partition_record(partition, stats, version)
            older = out.get(record["key"])
            merged = record if older is None else md.combine(older, record)
            assert merged is not None  # neither is a tombstone
            out[record["key"]] = merged
    if tight:
        for record in out.values():
            record[_STATS] = {**record[_STATS], "isTightBound": True}
    return out


def change_records(data_storage: Storage, version: int, column_stats: Mapping[str, Mapping[str, dict[str, Any]]],
                   added: Mapping[str, Iterable[str]], listed: Sequence[str] | None,
                   reported: Mapping[str, Mapping[str, FileRanges]] | None = None,
                   tight: bool = False) -> dict[str, dict[str, Any]]:
    """The partition_stats records of one data instant (or, `tight`, of every committed file): `column_stats`
    (partition -> the column_stats records of the base files it added; `reported`: their column ranges,
    partition -> file name -> ranges, where the write tasks gave them) and the statistics of the log files
    among `added` (partition -> file names)."""
    footers: dict[tuple[str, str], list[dict[str, Any]]] = {}
    for partition, records in column_stats.items():
        for record in records.values():
            footers.setdefault((partition, record[_STATS]["fileName"]), []).append(record[_STATS])
    file_stats: dict[str, list[dict[str, Any]]] = {}
    for partition, names in added.items():
        for name in names:
            if parse_log_file(partition, name) is not None:
                file_stats.setdefault(partition, []).extend(log_file_stats(data_storage, partition, name, listed))
            elif is_parquet_base(partition, name):
                file_stats.setdefault(partition, []).extend(
                    base_file_stats(data_storage, partition, name, footers.get((partition, name), []), listed,
                                    (reported or {}).get(partition, {}).get(name)))
    return partition_records(version, file_stats, tight)


def is_maintained(data_storage: Storage) -> bool:
    """Whether the data table's hoodie.properties (read afresh) lists partition_stats."""
    return md.PARTITION_STATS in listed_partitions(data_storage)


# ------------------------------------------------------------------------------------ enabling and dropping


def _bootstrap(storage: Storage, config: TableConfig) -> None:
    """Tight statistics of every committed file into the partition's initialising deltacommit."""
    def build(committed: Mapping[str, list[str]], timeline: Timeline,
              listed: Sequence[str] | None) -> Mapping[str, dict[str, Any]]:
        footers = added_file_records(storage, config.version, committed, listed)
        return change_records(storage, config.version, footers, committed, listed, tight=True)

    bootstrap_index(storage, config, md.PARTITION_STATS, INIT_INSTANT, build)


def _drop(storage: Storage) -> None:
    set_listed(storage, [p for p in listed_partitions(storage) if p != md.PARTITION_STATS])
    MetadataTable.open(storage).storage.delete_dir(md.PARTITION_STATS)


def planned_config(config: TableConfig, enable: bool | None) -> TableConfig:
    """The config as hoodie.metadata.index.partition.stats.enable will make it; ConfigError when the table has
    (or will have) no column_stats to build it beside (Hudi requires both)."""
    if enable is None:
        return config
    if enable and md.COLUMN_STATS not in config.metadata_partitions:
        raise ConfigError("hoodie.metadata.index.partition.stats.enable=true needs column_stats: set "
                          "hoodie.metadata.index.column.stats.enable=true too (and hoodie.metadata.enable=true)")
    partitions = sorted({*config.metadata_partitions, md.PARTITION_STATS} if enable
                        else set(config.metadata_partitions) - {md.PARTITION_STATS})
    return dataclasses.replace(config, metadata_partitions=partitions)


def apply_setting(storage: Storage, config: TableConfig, enable: bool | None) -> TableConfig:
    """Make the partition_stats partition follow hoodie.metadata.index.partition.stats.enable: True builds it
    from the committed files, False drops it, None keeps what the table has. Returns the config afterwards."""
    planned_config(config, enable)
    return follow_setting(storage, config, enable, is_maintained, _bootstrap, _drop)
