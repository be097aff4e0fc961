"""The option registry: every setting of hudi-py declared once (key, type, default, aliases, scope, doc), and the
relations between settings that Apache Hudi checks when it builds its write config. Canonical keys are Apache
Hudi's Spark keys; the other keys Hudi 0.14-1.2 reads for a setting are its aliases. Options are parsed onto
`HudiOptions` by hudi_ds.config.option_parsing."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator
from pydantic.types import PositiveFloat, PositiveInt

from hudi_ds.config.hudi_features import UNWRITTEN_INDEXES
from hudi_ds.config.merge_mode import (
    COMMIT_TIME_MERGER_ID,
    CUSTOM,
    EVENT_TIME_MERGER_ID,
    FIRST_VALUE_PAYLOAD,
    PARTIAL_PAYLOADS,
    infer_merge_mode,
    mode_of_payload,
    mode_of_strategy,
    payload_class_name,
)
from hudi_ds.config.retention_rules import (
    check_archive_keeps_retained_commits,
    check_archive_window,
    inferred_clean_policy,
)
from hudi_ds.config.table_config import LEGACY_CDC_MODES
from hudi_ds.errors import ConfigError

TableType = Literal["MERGE_ON_READ", "COPY_ON_WRITE"]
Operation = Literal["upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table"]
QueryType = Literal["snapshot", "read_optimized", "incremental"]
CdcMode = Literal["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]
WriteIndex = Literal["BUCKET", "SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "RECORD_INDEX"]
CleanPolicyName = Literal["KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"]




Scope = Literal["table", "write", "read", "service", "storage"]
SCOPES: tuple[Scope, ...] = ("table", "write", "read", "service", "storage")


def opt(key: str, default: Any, doc: str, *aliases: str, scope: Scope = "write") -> Any:
    """One option: `key` is the canonical (Apache Hudi Spark) name; `aliases` are also accepted. `scope` says
    what it configures: the table's shape (fixed at creation), writes, reads, the table services that run after
    each commit, or storage access."""
    return Field(default, description=doc, json_schema_extra={"key": key, "aliases": list(aliases), "scope": scope})


class HudiOptions(BaseModel):
    """Every option of hudi-py, for tables, reads, writes and services (scope tells which)."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    # ---- table shape (used when the first write creates the table; checked against an existing one) ----
    path: str | None = opt("path", None, "Table base path; set by save(path) / load(path).", scope="table")
    table_name: str | None = opt(
        "hoodie.table.name", None,
        "Table name stored in hoodie.properties; defaults to the last path segment (non-alphanumerics as '_').",
        "table.name", "hoodie.datasource.write.table.name", scope="table")
    record_key: list[str] = opt(
        "hoodie.datasource.write.recordkey.field", [],
        "Record key column(s), comma-separated. Without one the first write creates a table without a record key: "
        "append-only, every row gets a generated key (<instant>_<task>_<row>, as Apache Hudi 0.14+ does).",
        "hoodie.table.recordkey.fields", scope="table")
    ordering_field: str | None = opt(
        "hoodie.datasource.write.precombine.field", None,
        "Ordering (precombine / event-time) column: per key the highest value wins. Optional.",
        "precombine.field", "write.precombine.field", "hoodie.table.precombine.field",
        "hoodie.table.ordering.fields", "hoodie.datasource.write.ordering.fields", "hoodie.payload.ordering.field",
        scope="table")
    partition_fields: list[str] = opt(
        "hoodie.datasource.write.partitionpath.field", [],
        "Partition column(s), comma-separated; empty for a non-partitioned table.",
        "hoodie.table.partition.fields", scope="table")
    table_type: TableType = opt(
        "hoodie.datasource.write.table.type", "MERGE_ON_READ",
        "MERGE_ON_READ (updates go to log files) or COPY_ON_WRITE (updates rewrite base files); MOR/COW accepted.",
        "table.type", "hoodie.table.type", "hoodie.datasource.write.storage.type", scope="table")
    table_version: Literal[6, 8, 9] = opt(
        "hoodie.write.table.version", 6,
        "Table version of a new table (6: read by every engine; 8: Apache Hudi 1.0; 9: Hudi 1.1/1.2, what Hudi 1.x "
        "writes). An existing table is written at its own version; a higher one upgrades it when "
        "hoodie.write.auto.upgrade is true (docs/compatibility.md).", scope="table")
    auto_upgrade: bool = opt(
        "hoodie.write.auto.upgrade", True,
        "Upgrade an older table to hoodie.write.table.version before writing (as Apache Hudi's writers do); false "
        "keeps the table at its version.")
    index_type: WriteIndex = opt(
        "hoodie.index.type", "BUCKET", "How writes find a key's file group: BUCKET (hash; the default of new tables), "
        "SIMPLE / BLOOM (read the keys of the partitions written), GLOBAL_SIMPLE / GLOBAL_BLOOM (of all partitions), "
        "RECORD_INDEX (global: finds keys in the metadata table's record index, which it turns on). "
        "Tables that record none (Apache Hudi's) default to SIMPLE (docs/compatibility.md#indexes).", "index.type",
        scope="table")
    bucket_engine: Literal["SIMPLE"] = opt(
        "hoodie.index.bucket.engine", "SIMPLE", "Bucket index engine; only SIMPLE.", "hoodie.bucket.index.engine", scope="table")
    num_buckets: int = opt(
        "hoodie.bucket.index.num.buckets", 4, "Buckets (file groups) per partition; fixed when the table is created.",
        "bucket.index.num.buckets", scope="table")
    hive_style: bool = opt(
        "hoodie.datasource.write.hive_style_partitioning", False, "Partition folders as col=value.",
        "hive_style_partitioning", scope="table")
    url_encode: bool = opt(
        "hoodie.datasource.write.partitionpath.urlencode", False, "URL-encode partition values in paths.", scope="table")
    keygen_class: str | None = opt(
        "hoodie.datasource.write.keygenerator.class", None,
        "TimestampBasedKeyGenerator makes a table's partition paths from a timestamp (hoodie.keygen.timebased.*); "
        "Simple, Complex and NonPartitioned are accepted for compatibility (the table infers one of them).",
        "hoodie.table.keygenerator.class", "hoodie.datasource.write.keygenerator.type", scope="table")
    timestamp_type: str | None = opt(
        "hoodie.keygen.timebased.timestamp.type", None,
        "Timestamp-based partitions (TimestampBasedKeyGenerator, CustomKeyGenerator's TIMESTAMP fields): what the "
        "partition value is: UNIX_TIMESTAMP (seconds), EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR (of "
        "hoodie.keygen.timebased.timestamp.scalar.time.unit) or DATE_STRING (parsed with the input date format). "
        "Taken from hoodie.properties when it holds it (docs/compatibility.md#key-generators).", scope="table")
    timestamp_scalar_unit: str | None = opt(
        "hoodie.keygen.timebased.timestamp.scalar.time.unit", None,
        "SCALAR timestamp partitions: the java.util.concurrent.TimeUnit of the values (default SECONDS).",
        scope="table")
    timestamp_input_format: str | None = opt(
        "hoodie.keygen.timebased.input.dateformat", None,
        "DATE_STRING timestamp partitions: the Joda pattern(s) of the input strings, separated by the delimiter.",
        scope="table")
    timestamp_input_delimiter: str | None = opt(
        "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex", None,
        "DATE_STRING timestamp partitions: the regex between input patterns (default ',').", scope="table")
    timestamp_output_format: str | None = opt(
        "hoodie.keygen.timebased.output.dateformat", None,
        "Timestamp partitions: the Joda pattern of the partition path, e.g. yyyy/MM/dd (numeric fields y, M, d, H, "
        "m, s, S and literal text).", scope="table")
    timestamp_timezone: str | None = opt(
        "hoodie.keygen.timebased.timezone", None,
        "Timestamp partitions: the time zone of input and output (overrides the two below).", scope="table")
    timestamp_input_timezone: str | None = opt(
        "hoodie.keygen.timebased.input.timezone", None,
        "Timestamp partitions: the zone of DATE_STRING values without an offset.", scope="table")
    timestamp_output_timezone: str | None = opt(
        "hoodie.keygen.timebased.output.timezone", None,
        "Timestamp partitions: the zone paths are formatted in (unset: the value's own zone for DATE_STRING, UTC "
        "for numbers, where Apache Hudi takes the JVM's default).", scope="table")
    cdc_enabled: bool = opt(
        "hoodie.table.cdc.enabled", False,
        "Persist change data at write time (Apache Hudi's RFC-51): every commit that updates or deletes rows of an "
        "existing file group writes a -cdc log file beside it, and the change feed reads those instead of "
        "comparing file slices. Fixed when the table is created.", "cdc.enabled", scope="table")
    cdc_mode: CdcMode = opt(
        "hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER",
        "What the change data holds: OP_KEY_ONLY (operation and record key), DATA_BEFORE (also the before-image) or "
        "DATA_BEFORE_AFTER (before- and after-images: the change feed needs no other file). Fixed when the table "
        "is created.", "cdc.supplemental.logging.mode", scope="table")
    populate_meta_fields: bool = opt(
        "hoodie.populate.meta.fields", True,
        "Fill the five _hoodie_* meta columns of base files. false (virtual keys, COPY_ON_WRITE only): base files "
        "leave them null but _hoodie_file_name, as Apache Hudi writes them, so a load writes less; keys are "
        "computed from the record key columns, and incremental reads and the change feed see a file's rows as "
        "written by the commit that wrote the file (docs/compatibility.md#virtual-keys). Fixed when the table is "
        "created.", scope="table")
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
    # ---- partition_stats (branch partition-stats; the lead may move this block) ----
    partition_stats_enable: bool | None = opt(
        "hoodie.metadata.index.partition.stats.enable", None,
        "The metadata table's partition_stats partition (min, max, null and value counts per data partition and "
        "column, over its base and log files), which readers use to skip whole partitions a filter cannot match. "
        "true builds it from the committed files (needs column_stats: "
        "hoodie.metadata.index.column.stats.enable=true) and keeps it up to date; false drops it (dropping "
        "column_stats drops it too); unset keeps what the table has. Indexes the columns column_stats indexes.")
    # ---- end of the partition_stats block ----
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

    # ---- write ---------------------------------------------------------------------------------------
    update_partition_path: bool = opt(
        "hoodie.simple.index.update.partition.path", True, "GLOBAL_SIMPLE: a key written with another partition "
        "than the one holding it moves there (deleted from the old one); false updates it where it is.")
    bloom_update_partition_path: bool = opt(
        "hoodie.bloom.index.update.partition.path", True, "The same for GLOBAL_BLOOM.")
    record_index_update_partition_path: bool = opt(
        "hoodie.record.index.update.partition.path", False, "The same for RECORD_INDEX (false by default, as in "
        "Apache Hudi).")
    small_file_limit: int = opt(
        "hoodie.parquet.small.file.limit", 104857600, "Lookup indexes (all but BUCKET): base files under this many "
        "bytes take new keys before new file groups are made (<= 0: none).")
    max_file_size: PositiveInt = opt(
        "hoodie.parquet.max.file.size", 125829120, "Lookup indexes: bytes small files fill up to and new ones aim at.")
    insert_split_size: PositiveInt = opt(
        "hoodie.copyonwrite.insert.split.size", 500000, "Lookup indexes: new keys per new file group when "
        "hoodie.copyonwrite.insert.auto.split is false (else max file size / record size).")
    auto_split_inserts: bool = opt("hoodie.copyonwrite.insert.auto.split", True, "See the split size.")
    record_size_estimate: PositiveInt = opt(
        "hoodie.copyonwrite.record.size.estimate", 1024, "Bytes per record until a commit wrote more than "
        "hoodie.record.size.estimation.threshold x the small file limit (then its bytes per record count).")
    record_size_threshold: PositiveFloat = opt(
        "hoodie.record.size.estimation.threshold", 1.0, "See the record size estimate.")
    operation: Operation = opt(
        "hoodie.datasource.write.operation", "upsert",
        "upsert, insert, bulk_insert, delete, insert_overwrite or insert_overwrite_table (mode('append')); "
        "mode('overwrite') is insert_overwrite_table (or insert_overwrite when that operation is set). Unset on a "
        "table without a record key: insert (upsert and delete need a record key).",
        "write.operation")
    payload_class: str | None = opt(
        "hoodie.datasource.write.payload.class", None,
        "The merge rule of a new table as a payload class (as on version 6 tables): DefaultHoodieRecordPayload or "
        "EventTimeAvroPayload (event-time ordering), OverwriteWithLatestAvroPayload (commit-time ordering), "
        "PartialUpdateAvroPayload / OverwriteNonDefaultsWithLatestAvroPayload (the same with IGNORE_DEFAULTS partial "
        "updates), FirstValueAvroPayload (event-time ordering where an equal ordering value keeps the stored record "
        "and, within a write, the first row; needs an ordering field). On an existing table it must agree with the "
        "table's merge mode.",
        "payload.class", "write.payload.class", "hoodie.compaction.payload.class", scope="table")
    merge_mode: Literal["EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"] | None = opt(
        "hoodie.record.merge.mode", None,
        "How the versions of a record merge: EVENT_TIME_ORDERING (the highest ordering value wins, ties to the "
        "later write) or COMMIT_TIME_ORDERING (the later write wins; no ordering field needed); CUSTOM only with "
        "the payload class FirstValueAvroPayload (as Apache Hudi 1.1 records it). Unset: event-time with an "
        "ordering field, else commit-time. Version 6 tables record it as their payload class.",
        "hoodie.write.record.merge.mode", scope="table")
    partial_update_mode: Literal["NONE", "KEEP_VALUES", "FILL_DEFAULTS", "IGNORE_DEFAULTS", "IGNORE_MARKERS"] | None = (
        opt("hoodie.table.partial.update.mode", None,
            "Partial updates (version 9 tables): KEEP_VALUES (a write carrying some columns keeps the others), "
            "IGNORE_DEFAULTS (a null does not overwrite), IGNORE_MARKERS (a value equal to "
            "hoodie.write.partial.update.custom.marker does not overwrite), FILL_DEFAULTS or NONE (missing columns "
            "become null). Version 6 tables take IGNORE_DEFAULTS as PartialUpdateAvroPayload (event time) or "
            "OverwriteNonDefaultsWithLatestAvroPayload (commit time).", scope="table"))
    partial_update_marker: str | None = opt(
        "hoodie.write.partial.update.custom.marker", None,
        "IGNORE_MARKERS: the string that marks a cell the write does not change (Debezium's "
        "__debezium_unavailable_value); string columns only.", scope="table")
    delete_field: str | None = opt(
        "hoodie.payload.delete.field", None,
        "A column whose value hoodie.payload.delete.marker makes a row a delete (Apache Hudi's custom delete marker, "
        "e.g. AWS DMS's Op=D): an upsert deletes the key, an insert drops the row. A column _hoodie_is_deleted=true "
        "always deletes. Version 9 tables record both at creation; on versions 6 and 8 they are settings of each "
        "write, as in Apache Hudi.", "hoodie.record.merge.property.hoodie.payload.delete.field")
    delete_marker: str | None = opt(
        "hoodie.payload.delete.marker", None,
        "The value of hoodie.payload.delete.field that marks a delete (compared as text, as Apache Hudi does).",
        "hoodie.record.merge.property.hoodie.payload.delete.marker")
    merge_strategy_id: str | None = opt(
        "hoodie.record.merge.strategy.id", None,
        "The merge mode as Apache Hudi's merge strategy id (eeb8d96f-...: event time, ce9acb64-...: commit time); "
        "the ids of custom mergers are refused.", "hoodie.write.record.merge.strategy.id",
        "hoodie.datasource.write.record.merger.strategy", "hoodie.compaction.record.merger.strategy",
        "record.merger.strategy", scope="table")
    log_block_format: Literal["parquet", "avro"] = opt(
        "hoodie.logfile.data.block.format", "parquet", "Data block format of MOR log files.")
    parquet_compression: Literal["snappy", "gzip", "zstd", "lz4", "brotli", "none"] = opt(
        "hoodie.parquet.compression.codec", "snappy", "Parquet codec of base files and parquet log blocks.")
    changelog_column: str | None = opt(
        "hoodie.datasource.write.changelog.column", None,
        "A change-kind column: Spark CDF _change_type (insert/update_postimage/update_preimage/delete), Debezium "
        "op (c/r/u/d) or Flink row kinds (+I/+U/-U/-D). Pre-images are dropped, deletes delete; not stored.")
    changelog_enabled: bool = opt(
        "changelog.enabled", False,
        "Flink-style switch: treat a '_change_type' or 'op' column as the change kind (see the column option).")
    insert_dup_policy: Literal["none", "drop", "fail"] = opt(
        "hoodie.datasource.insert.dup.policy", "none",
        "Insert-if-absent, as Apache Hudi's insert applies it: drop (an incoming row whose key the table holds is "
        "dropped) or fail (the write fails naming such keys, nothing written); none: such rows update the record. "
        "With drop or fail an upsert is written as an insert; other operations are not affected. The key is "
        "looked up where the table's index looks (the row's partition, anywhere with a global index).")
    insert_drop_duplicates: bool = opt(
        "hoodie.datasource.write.insert.drop.duplicates", False,
        "Apache Hudi 0.x's switch for hoodie.datasource.insert.dup.policy=drop (a policy of fail still fails).")
    drop_partition_columns: bool = opt(
        "hoodie.datasource.write.drop.partition.columns", False, "Must be false (partition columns are stored).")
    write_tasks: int | None = opt("write.tasks", None, "Flink's writer parallelism: accepted and ignored.")

    # ---- read ----------------------------------------------------------------------------------------
    query_type: QueryType = opt(
        "hoodie.datasource.query.type", "snapshot", "snapshot, read_optimized (base files only) or incremental.",
        "query.type", "hoodie.datasource.view.type", scope="read")
    as_of: str | None = opt(
        "as.of.instant", None, "Time travel: read the table as of this instant (yyyyMMddHHmmssSSS or ISO).",
        "hoodie.datasource.read.as.of.instant", scope="read")
    begin_instant: str | None = opt(
        "hoodie.datasource.read.begin.instanttime", None,
        "Incremental read: changes after this instant ('0' or 'earliest' for all). Streaming read start position: "
        "earliest (the snapshot, then every change), latest (new commits only; the default for streams is "
        "earliest) or an instant time.", "read.start-commit", "hoodie.datasource.streaming.startOffset",
        scope="read")
    end_instant: str | None = opt(
        "hoodie.datasource.read.end.instanttime", None, "Incremental read: changes up to this instant (inclusive).",
        "read.end-commit", scope="read")
    filter_pushdown: Literal["auto", "true", "false"] = opt(
        "hoodie.datasource.read.filter.pushdown", "auto",
        "hudi-py: take over Spark filters (partition pruning + exact row filters). 'auto' does so only on pyspark "
        "versions that keep pushdown results per scan: pyspark 4.1-4.3 cache them on the relation, so an action "
        "without filters on a DataFrame that earlier ran a filtered action would read the filtered rows. 'true' "
        "enables it anyway (then load() a fresh DataFrame per filtered query); 'false' disables it.",
        scope="read")
    split_max_bytes: int = opt(
        "hoodie.datasource.read.split.max.bytes", 128 * 1024 * 1024,
        "hudi-py: bytes per Spark partition, about (a read takes enough partitions that they average no more); "
        "base files larger than this are split by row groups (a slice with log files gets one more split for its "
        "log-only records), smaller file slices are packed together, the partitions balanced by size (1 = one "
        "partition per file slice). Batch and streaming reads.", scope="read")
    split_max_rows: int = opt(
        "hoodie.datasource.read.split.max.rows", 1_000_000,
        "hudi-py: most base-file rows per split (cut at row-group boundaries), so that no single task of a batch "
        "or micro-batch reads an unbounded file slice. Batch and streaming reads.", scope="read")
    split_open_cost: int = opt(
        "hoodie.datasource.read.split.open.cost", 1024 * 1024,
        "hudi-py: bytes a file slice counts for on top of its size when packing partitions.", scope="read")
    min_partitions: int | None = opt(
        "hoodie.datasource.read.min.partitions", None,
        "hudi-py: aim for at least this many Spark partitions (default: the driver's CPU count).", scope="read")
    meta_columns: bool = opt(
        "hoodie.datasource.read.meta.columns", True,
        "hudi-py: false leaves the five _hoodie_* meta columns out of a batch read's schema (they are strings, the "
        "costliest columns to hand to Spark); the default includes them, as Apache Hudi's reader does.",
        scope="read")
    read_slices: Literal["all", "with_logs"] = opt(
        "hoodie.datasource.read.slices", "all",
        "hudi-py internal, set by hudi_ds.spark.read_table: 'with_logs' reads only the file slices that have log "
        "files to merge (read_table scans the others with Spark's own parquet reader). Batch reads.", scope="read")

    # ---- streaming reads (batch reads ignore them) ------------------------------------------------------
    streaming_enabled: bool = opt(
        "read.streaming.enabled", False, "Flink's streaming-read switch (use spark.readStream instead).",
        scope="read")
    check_interval: int | None = opt(
        "read.streaming.check-interval", None, "Flink's poll interval in seconds (Spark triggers decide).",
        scope="read")
    incremental_format: Literal["latest_state", "cdc"] = opt(
        "hoodie.datasource.query.incremental.format", "latest_state",
        "Incremental and streaming reads: latest_state (newest image of each changed record; deletes dropped) or "
        "cdc (the change feed: _change_type insert/update_preimage/update_postimage/delete and _commit_time). "
        "changelog.enabled=true also selects cdc.", "read.incremental.format", scope="read")
    incr_fallback_full_scan: bool = opt(
        "hoodie.datasource.read.incr.fallback.fulltablescan.enable", False,
        "When cleaning removed files a streaming/incremental read needs (archived commits alone are read from "
        "the archive), read the rows the latest snapshot holds from those commits instead of failing, as Hudi "
        "does (in change-feed mode they come as inserts).", scope="read")
    stream_max_instants: int | None = opt(
        "hoodie.datasource.read.streaming.max.instants", None,
        "Streaming read admission control: at most this many commits per micro-batch.",
        "read.streaming.max-instants", scope="read")
    stream_max_rows: int | None = opt(
        "hoodie.datasource.read.streaming.max.rows", None,
        "Streaming read admission control (pyspark >= 4.2): about this many changed rows per micro-batch "
        "(whole commits; at least one).", "read.streaming.max-rows", scope="read")
    stream_max_files: int | None = opt(
        "hoodie.datasource.read.streaming.max.files", None,
        "Streaming read admission control (pyspark >= 4.2): about this many written files per micro-batch.",
        "read.streaming.max-files", scope="read")

    # ---- streaming writes ----------------------------------------------------------------------------------
    checkpoint_location: str | None = opt(
        "checkpointlocation", None, "Spark's checkpoint location (set by Spark).")
    streaming_identifier: str = opt(
        "hoodie.datasource.write.streaming.checkpoint.identifier", "default_single_writer",
        "Streaming sink: this writer's identity, recorded with each micro-batch id in the commit metadata "
        "(exactly-once across restarts). Give concurrent streaming writers of one table distinct values.",
        "write.streaming.checkpoint.identifier")

    heartbeat_timeout_s: float = opt(
        "hoodie.client.heartbeat.timeout.secs", 300.0,
        "hudi-py: a pending write or compaction whose heartbeat is older than this is taken for crashed: the "
        "next writer rolls it back (a compaction is re-executed), and rollback() no longer needs force.",
        scope="write")

    # ---- table services after each commit (HudiTable.write, Spark batch writes, the streaming sink) ----
    compaction_enabled: bool = opt(
        "compaction.schedule.enabled", True,
        "MERGE_ON_READ: schedule a compaction after a commit once enough delta commits accumulated.",
        scope="service")
    compaction_delta_commits: int = opt(
        "compaction.delta_commits", 5, "Schedule a compaction every N delta commits.",
        "hoodie.compact.inline.max.delta.commits", scope="service")
    compaction_async: bool = opt(
        "compaction.async.enabled", False,
        "Execute compactions on a background thread of the writing process (writes go on; their logs land in "
        "the new file slices) instead of inline after the commit. Long-lived writers only (HudiTable, the "
        "streaming sink); Spark batch writes compact inline.", "hoodie.compact.async",
        "hoodie.datasource.compaction.async.enable", scope="service")
    clean_enabled: bool = opt(
        "hoodie.clean.automatic", True, "Clean after each commit.", "clean.async.enabled", scope="service")
    clean_policy: CleanPolicyName | None = opt(
        "hoodie.clean.policy", None,
        "Which file versions cleaning keeps: KEEP_LATEST_COMMITS (those queries on the last "
        "hoodie.clean.commits.retained commits read), KEEP_LATEST_FILE_VERSIONS (the newest "
        "hoodie.clean.fileversions.retained file slices of each file group; no time travel window) or "
        "KEEP_LATEST_BY_HOURS (those queries on the commits of the last hoodie.clean.hours.retained hours read). "
        "Unset: the policy whose retained count alone is set, as Apache Hudi infers it, else KEEP_LATEST_COMMITS.",
        "hoodie.cleaner.policy", "clean.policy", scope="service")
    clean_retain_commits: int = opt(
        "hoodie.clean.commits.retained", 10,
        "KEEP_LATEST_COMMITS: keep the file versions queries on the last N commits read (time travel and "
        "incremental reads within them).", "hoodie.cleaner.commits.retained", "clean.retain_commits",
        scope="service")
    clean_retain_file_versions: int = opt(
        "hoodie.clean.fileversions.retained", 3,
        "KEEP_LATEST_FILE_VERSIONS: keep the newest N file slices of each file group.",
        "hoodie.cleaner.fileversions.retained", "clean.retain_file_versions", scope="service")
    clean_retain_hours: int = opt(
        "hoodie.clean.hours.retained", 24,
        "KEEP_LATEST_BY_HOURS: keep the file versions queries on the commits of the last N hours read (hours "
        "before the clean, in the table's timeline time zone).", "hoodie.cleaner.hours.retained",
        "clean.retain_hours", scope="service")
    archive_enabled: bool = opt(
        "hoodie.archive.automatic", True, "Archive old instants after each commit.", scope="service")
    metadata_compact_max_delta_commits: int = opt(
        "hoodie.metadata.compact.max.delta.commits", 10,
        "Compact the metadata table's files partition into an HFile base file once this many delta commits "
        "await it (checked by each write before its own delta commit), then clean its older file slices.",
        scope="service")
    archive_min_commits: int = opt(
        "hoodie.keep.min.commits", 20, "Archiving keeps at least this many commits on the active timeline.",
        "archive.min_commits", scope="service")
    archive_max_commits: int = opt(
        "hoodie.keep.max.commits", 30, "Archiving starts when the active timeline holds more commits than this.",
        "archive.max_commits", scope="service")

    # ---- validators --------------------------------------------------------------------------------
    @field_validator("record_key", "partition_fields", mode="before")
    @classmethod
    def _split_names(cls, v: Any) -> Any:
        if isinstance(v, str):
            return [p.strip() for p in v.split(",") if p.strip()]
        return v

    @field_validator("ordering_field", mode="before")
    @classmethod
    def _one_ordering(cls, v: Any) -> Any:
        if isinstance(v, str):
            names = [p.strip() for p in v.split(",") if p.strip()]
            if len(names) > 1:
                raise ValueError(f"one ordering field only, got {names}")
            return names[0] if names else None
        return v

    @field_validator("table_type", mode="before")
    @classmethod
    def _table_type(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().upper()
            return {"MOR": "MERGE_ON_READ", "COW": "COPY_ON_WRITE"}.get(v, v)
        return v

    @field_validator("table_version", mode="before")
    @classmethod
    def _table_version(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().isdigit():
            return int(v.strip())
        return v

    @field_validator("index_type", "bucket_engine", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        """Upper case; an index hudi-py does not write with is refused with the reason."""
        v = v.strip().upper() if isinstance(v, str) else v
        if v in UNWRITTEN_INDEXES:
            raise ValueError(f"hudi-py does not write with the {v} index: {UNWRITTEN_INDEXES[v]}")
        return v

    @field_validator("operation", "query_type", "log_block_format", "parquet_compression", "filter_pushdown",
                     "incremental_format", "read_slices", mode="before")
    @classmethod
    def _lower(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().lower()
            return {"uncompressed": "none", "incr": "incremental", "readoptimized": "read_optimized"}.get(v, v)
        return v

    @field_validator("num_buckets", mode="before")
    @classmethod
    def _buckets(cls, v: Any) -> Any:
        """The one check of the bucket count, whichever way it is given (a bool is not a count)."""
        if isinstance(v, str) and v.strip().lstrip("+").isdigit():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 99_999_999:
            raise ValueError("the bucket count must be an integer between 1 and 99999999")
        return v

    @field_validator("clean_policy", "partial_update_mode", mode="before")
    @classmethod
    def _upper_case_name(cls, v: Any) -> Any:
        return v.strip().upper() if isinstance(v, str) else v

    @field_validator("cdc_mode", mode="before")
    @classmethod
    def _cdc_mode(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().upper()
            return LEGACY_CDC_MODES.get(v, v)
        return v

    @field_validator("drop_partition_columns")
    @classmethod
    def _must_be_false(cls, v: bool) -> bool:
        if v:
            raise ValueError("hudi-py supports only false")
        return v

    @field_validator("payload_class")
    @classmethod
    def _payload(cls, v: str | None) -> str | None:
        if v and mode_of_payload(v) == CUSTOM and payload_class_name(v) != FIRST_VALUE_PAYLOAD:
            raise ValueError(
                f"hudi-py does not have the merge rule of {payload_class_name(v)} (Java code it cannot run); use "
                "DefaultHoodieRecordPayload (event-time ordering), OverwriteWithLatestAvroPayload (commit-time "
                "ordering), PartialUpdateAvroPayload or OverwriteNonDefaultsWithLatestAvroPayload, "
                "FirstValueAvroPayload (event-time ordering, ties keep the first version), or "
                "hoodie.record.merge.mode")
        return payload_class_name(v) if v else v

    @field_validator("merge_mode", mode="before")
    @classmethod
    def _merge_mode(cls, v: Any) -> Any:
        return v.strip().upper() if isinstance(v, str) else v

    @field_validator("merge_strategy_id")
    @classmethod
    def _merge_strategy(cls, v: str | None) -> str | None:
        if v and mode_of_strategy(v) == CUSTOM:
            raise ValueError(f"{v} is not the strategy id of a merge mode hudi-py has (custom mergers are Java code "
                             f"it cannot run); use {EVENT_TIME_MERGER_ID} (event time) or {COMMIT_TIME_MERGER_ID} "
                             "(commit time), or hoodie.record.merge.mode")
        return v.strip() if v else v

    @field_validator("keygen_class")
    @classmethod
    def _keygen(cls, v: str | None) -> str | None:
        if v:
            short = v.rsplit(".", 1)[-1].upper().replace("KEYGENERATOR", "").replace("_", "")
            if short not in ("SIMPLE", "COMPLEX", "NONPARTITIONED", "NONPARTITION", "TIMESTAMPBASED", "TIMESTAMP"):
                raise ValueError("hudi-py creates tables with Simple, Complex, NonPartitioned and TimestampBased key "
                                 "generators (and writes into Custom ones Apache Hudi made)")
        return v

    @field_validator("table_name")
    @classmethod
    def _table_name(cls, v: str | None) -> str | None:
        if v is not None and (not v or not v.replace("_", "a").isalnum()):
            raise ValueError("a table name is letters, digits and underscores")
        return v

    @field_validator("heartbeat_timeout_s")
    @classmethod
    def _not_negative(cls, v: float) -> float:
        if v < 0:
            raise ValueError("must be 0 or more seconds")
        return v

    @field_validator("compaction_delta_commits", "clean_retain_commits", "clean_retain_file_versions",
                     "clean_retain_hours", "archive_min_commits", "archive_max_commits",
                     "metadata_compact_max_delta_commits", "record_index_min_file_groups",
                     "record_index_max_file_groups", "record_index_max_file_group_bytes")
    @classmethod
    def _positive(cls, v: int) -> int:
        if v < 1:
            raise ValueError("must be at least 1")
        return v

    @model_validator(mode="after")
    def _merge_settings_agree(self) -> HudiOptions:
        if self.requested_merge_mode() == CUSTOM and self.payload_class != FIRST_VALUE_PAYLOAD:
            raise ValueError("a CUSTOM merger is Java code hudi-py cannot run; use EVENT_TIME_ORDERING or "
                             "COMMIT_TIME_ORDERING (CUSTOM goes only with the payload class FirstValueAvroPayload)")
        return self

    @model_validator(mode="after")
    def _delete_marker_pair(self) -> HudiOptions:
        if (self.delete_field is None) != (self.delete_marker is None):
            raise ValueError("hoodie.payload.delete.field and hoodie.payload.delete.marker go together (the field "
                             "and the value of it that marks a delete): set both or neither")
        return self

    @model_validator(mode="after")
    def _retention(self) -> HudiOptions:
        """The relations between retention settings Apache Hudi checks when it builds its write config."""
        check_archive_window(self.archive_min_commits, self.archive_max_commits)
        if self.cleaning_policy() == "KEEP_LATEST_COMMITS":
            check_archive_keeps_retained_commits(self.archive_min_commits, self.clean_retain_commits)
        return self

    def is_set(self, name: str) -> bool:
        return name in self.model_fields_set

    def requested_merge_mode(self) -> str | None:
        """The merge mode the merge settings ask for (mode, payload class, strategy id), None when none is set;
        ValueError when they contradict each other."""
        if self.merge_mode is None and self.payload_class is None and self.merge_strategy_id is None:
            return None
        return infer_merge_mode(self.merge_mode, self.payload_class, self.merge_strategy_id, self.ordering_field,
                                self.table_version)

    def duplicate_policy(self) -> str:
        """What an insert does with rows whose keys the table holds: none, drop or fail (Apache Hudi's
        HoodieSparkSqlWriter: fail wins, the 0.x drop switch means drop)."""
        if self.insert_dup_policy == "none" and self.insert_drop_duplicates:
            return "drop"
        return self.insert_dup_policy

    def requested_partial_update_mode(self) -> str | None:
        """The partial update mode the options ask for (the mode, or a version 6 partial-update payload)."""
        if self.partial_update_mode is not None:
            return self.partial_update_mode
        if self.payload_class in PARTIAL_PAYLOADS:
            return "IGNORE_DEFAULTS"
        return None

    def cleaning_policy(self) -> CleanPolicyName:
        """hoodie.clean.policy, or the policy whose retained count alone is set (Apache Hudi's inference)."""
        return self.clean_policy or inferred_clean_policy(self.is_set)  # type: ignore[return-value]

    def with_values(self, **values: Any) -> HudiOptions:
        """A copy with some settings changed (validated again); they count as set."""
        data = {k: getattr(self, k) for k in self.model_fields_set}
        data.update(values)
        return validated_options(data, {})


def validated_options(values: dict[str, Any], given_as: dict[str, str]) -> HudiOptions:
    try:
        return HudiOptions(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err.get("loc") else ""
        if not name:  # a check across settings: its message names them
            raise ConfigError(str(err.get("msg", exc)).removeprefix("Value error, ")) from None
        field = HudiOptions.model_fields.get(name)
        extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
        key = given_as.get(name, str(extra.get("key", name)))
        msg = str(err.get("msg", exc)).removeprefix("Value error, ")
        raise ConfigError(f"option {key}={values.get(name)!r} is not valid: {msg}") from None
