"""The options of a read: query type, time travel and incremental ranges, Spark splits and pushdown, and the
admission control of streaming reads."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from hudi_ds.config.option_field import OptionGroup, lower_name, opt

QueryType = Literal["snapshot", "read_optimized", "incremental"]


class ReadOptions(OptionGroup):
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

    @field_validator("query_type", "filter_pushdown", "incremental_format", "read_slices", mode="before")
    @classmethod
    def _lower_read_choices(cls, v: Any) -> Any:
        return lower_name(v)
