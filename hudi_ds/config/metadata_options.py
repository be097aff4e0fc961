"""The options of the metadata table: whether there is one, its column_stats, partition_stats and record_index
partitions, and when it is compacted."""

from __future__ import annotations

from pydantic import field_validator

from hudi_ds.config.option_field import OptionGroup, at_least_one, opt


class MetadataTableOptions(OptionGroup):
    metadata_enable: bool | None = opt(
        "hoodie.metadata.enable", None,
        "The metadata table (.hoodie/metadata, its files partition: the file listing Apache Hudi 1.x and hudi-rs "
        "read on versions 8 and 9). true creates it on a version 8/9 table and keeps it up to date; false drops it "
        "(as Hudi's writers do); unset is Apache Hudi 1.x's default: true on version 8/9 tables (a write to one "
        "without a metadata table bootstraps it, as Hudi's writers do), and on version 6 tables (whose metadata "
        "table hudi-py does not write) whatever the table has. Reads take the "
        "file listing from the metadata table where the table has one (no LIST of a data partition), as Hudi's "
        "and hudi-rs's readers do, unless this is false.",
        "metadata.enabled")
    column_stats_enable: bool | None = opt(
        "hoodie.metadata.index.column.stats.enable", None,
        "The metadata table's column_stats partition (min, max, null and value counts per base file and column), "
        "which readers use to skip the files a filter cannot match (data skipping). true builds it from the "
        "committed files (the metadata table must be on) and keeps it up to date; false drops it; unset keeps "
        "what the table has. Indexed: the record key, partition path and commit time meta columns, then the "
        "first data columns of scalar types, 32 in all (Hudi's default column selection).")
    column_stats_columns: str | None = opt(
        "hoodie.metadata.index.column.stats.column.list", None,
        "The columns column_stats (and partition_stats) index, comma-separated: the table's record key, partition "
        "path and commit time meta columns, then these (those of scalar types). Recorded in the table's index "
        "definitions file (.hoodie/.index_defs/index.json, as Apache Hudi 1.x does), which later writes follow "
        "when this is unset; files written before keep the statistics they have (Hudi does not rebuild the "
        "partition either: drop column_stats and build it again to index older files anew). A column the table "
        "does not have is refused. Unset: the table's recorded list, else Hudi's default selection.")
    partition_stats_enable: bool | None = opt(
        "hoodie.metadata.index.partition.stats.enable", None,
        "The metadata table's partition_stats partition (min, max, null and value counts per data partition and "
        "column, over its base and log files), which readers use to skip whole partitions a filter cannot match. "
        "true builds it from the committed files (needs column_stats: "
        "hoodie.metadata.index.column.stats.enable=true) and keeps it up to date; false drops it (dropping "
        "column_stats drops it too); unset keeps what the table has. Indexes the columns column_stats indexes.")
    record_index_enable: bool | None = opt(
        "hoodie.metadata.record.index.enable", None,
        "The metadata table's record_index partition (record key -> partition and file group, what "
        "hoodie.index.type=RECORD_INDEX looks keys up in). true builds it from the table's keys (needs the metadata "
        "table: hoodie.metadata.enable=true) and keeps it up to date; false drops it; unset keeps what the table "
        "has.")
    record_index_min_file_groups: int = opt(
        "hoodie.metadata.record.index.min.filegroup.count", 10,
        "The fewest file groups a new record index gets (keys hash to one of them).")
    record_index_max_file_groups: int = opt(
        "hoodie.metadata.record.index.max.filegroup.count", 10_000,
        "The most file groups a new record index gets.")
    record_index_max_file_group_bytes: int = opt(
        "hoodie.metadata.record.index.max.filegroup.size", 1 << 30,
        "A new record index gets enough file groups for each to stay under this size (48 bytes per key, as Hudi "
        "estimates), between the min and max counts.")
    record_index_growth_factor: float = opt(
        "hoodie.metadata.record.index.growth.factor", 2.0,
        "A new record index is sized for this many times the keys the table holds.")
    metadata_compact_max_delta_commits: int = opt(
        "hoodie.metadata.compact.max.delta.commits", 10,
        "Compact the metadata table's files partition into an HFile base file once this many delta commits "
        "await it (checked by each write before its own delta commit), then clean its older file slices.",
        scope="service")

    @field_validator("metadata_compact_max_delta_commits", "record_index_min_file_groups",
                     "record_index_max_file_groups", "record_index_max_file_group_bytes")
    @classmethod
    def _positive_metadata_counts(cls, v: int) -> int:
        return at_least_one(v)
