"""The options of a write: where lookup indexes put keys and how big files get, the operation, change kinds and
duplicates, file formats, and what a streaming writer records."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator
from pydantic.types import NonNegativeInt, PositiveFloat, PositiveInt

from hudi_ds.config.option_field import OptionGroup, lower_name, opt

Operation = Literal["upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
                    "delete_partition"]


class WriteOptions(OptionGroup):
    update_partition_path: bool = opt(
        "hoodie.simple.index.update.partition.path", True, "GLOBAL_SIMPLE: a key written with another partition "
        "than the one holding it moves there (deleted from the old one); false updates it where it is.")
    bloom_update_partition_path: bool = opt(
        "hoodie.bloom.index.update.partition.path", True, "The same for GLOBAL_BLOOM.")
    bloom_use_metadata: bool = opt(
        "hoodie.bloom.index.use.metadata", False, "BLOOM / GLOBAL_BLOOM: take the base files' key ranges from the "
        "metadata table's column_stats of the record key meta column where it has them, so only files whose range "
        "holds a key being written open their footer (for the bloom filter); else every footer is read for its range.")
    record_index_update_partition_path: bool = opt(
        "hoodie.record.index.update.partition.path", False, "The same for RECORD_INDEX (false by default, as in "
        "Apache Hudi).")
    small_file_limit: int = opt(
        "hoodie.parquet.small.file.limit", 104857600, "Lookup indexes (all but BUCKET): base files under this many "
        "bytes take new keys before new file groups are made (<= 0: none).")
    small_file_candidates: NonNegativeInt = opt(
        "hoodie.merge.small.file.group.candidates.limit", 1, "Merge-on-read with a lookup index: at most this many "
        "small files of a partition, the smallest first, take new keys (each is rewritten with its updates; the "
        "rest of the new keys make new file groups), as Apache Hudi limits the files a delta commit rewrites.")
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
        "upsert, insert, bulk_insert, delete, insert_overwrite, insert_overwrite_table or delete_partition "
        "(mode('append')); "
        "mode('overwrite') is insert_overwrite_table (or insert_overwrite when that operation is set). Unset on a "
        "table without a record key: insert (upsert and delete need a record key).",
        "write.operation")
    partitions_to_delete: str | None = opt(
        "hoodie.datasource.write.partitions.to.delete", None,
        "delete_partition: the partition paths to delete, comma-separated, as the table writes them (e.g. "
        "dt=2024-01-01 hive-style); '*' matches any characters (dt=2024-01-*); paths the table does not have are "
        "skipped. Unset: the partitions of the rows written.")
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


    @field_validator("operation", "log_block_format", "parquet_compression", mode="before")
    @classmethod
    def _lower_write_choices(cls, v: Any) -> Any:
        return lower_name(v)

    @field_validator("drop_partition_columns")
    @classmethod
    def _must_be_false(cls, v: bool) -> bool:
        if v:
            raise ValueError("hudi-py supports only false")
        return v

    @field_validator("heartbeat_timeout_s")
    @classmethod
    def _not_negative(cls, v: float) -> float:
        if v < 0:
            raise ValueError("must be 0 or more seconds")
        return v
