"""Apache Hudi's own option keys for features hudi-py does not implement, and the answer each one gets.

A typical Hudi job carries keys of Hive sync, clustering, lock providers, metrics... `parse_options` answers such
a key by naming the feature: a ConfigError where ignoring it could change the data the table holds or a query
returns, an IgnoredOptionWarning where it cannot (each family says why in its comment). Keys that only switch a
feature off (`hoodie.datasource.hive_sync.enable=false`) are accepted silently, and so are the tuning knobs of
Apache Hudi's own writers (`TUNING_KEYS`), which have no meaning here.

`NOT_IMPLEMENTED_YET` holds the families that later work is to implement (metadata table, other indexes, merge
modes); promoting one means moving its keys into the option registry (hudi_ds.config.options).
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Literal

__all__ = ["FEATURES", "NOT_IMPLEMENTED_YET", "TUNING_KEYS", "UNWRITTEN_INDEXES", "HudiFeature", "IgnoredOptionWarning",
           "feature_of"]


class IgnoredOptionWarning(UserWarning):
    """An Apache Hudi option of a feature hudi-py does not implement was ignored; ignoring it cannot change data."""


@dataclass(frozen=True)
class HudiFeature:
    """A feature of Apache Hudi and the option keys that configure it."""

    name: str
    effect: Literal["error", "warning"]
    answer: str  # what hudi-py does instead, and what the user should do
    keys: frozenset[str] = frozenset()
    prefixes: tuple[str, ...] = ()
    # on/off switches of the whole feature and their "off" values (lower-case): when every switch given is off,
    # the feature's other keys are moot
    switches: Mapping[str, frozenset[str]] = field(default_factory=dict)
    # values of single keys that ask for what hudi-py does anyway
    harmless: Mapping[str, frozenset[str]] = field(default_factory=dict)

    def names(self, key: str) -> bool:
        return key in self.keys or key in self.switches or key in self.harmless

    def engaged(self, given: Mapping[str, str]) -> list[str]:
        """The given keys (lower-case key -> value) that ask for the feature; none when it is switched off."""
        def value(key: str) -> str:
            return given[key].strip().lower()

        switched = [k for k in given if k in self.switches]
        if switched and all(value(k) in self.switches[k] for k in switched):
            return []
        return [k for k in given if value(k) not in self.harmless.get(k, frozenset())]


def _keys(*keys: str) -> frozenset[str]:
    return frozenset(keys)


_FALSE = frozenset({"false"})
_TRUE = frozenset({"true"})
# harmless values are compared in lower case
_DEFAULT_DATE_TIME_PARSER = frozenset({"org.apache.hudi.keygen.parser.hoodiedatetimeparser"})

FEATURES: tuple[HudiFeature, ...] = (
    # --- warnings: the table's files and every query's rows are the same whether the feature runs or not -----------
    # catalog sync only tells a metastore about the table
    HudiFeature(
        "catalog sync (Hive metastore, AWS Glue, BigQuery, ADB)", "warning",
        "hudi-py writes the table's files only: register the table in your catalog yourself (Spark SQL `CREATE "
        "TABLE ... USING hudi LOCATION '<path>'`), or run Apache Hudi's sync tool after writing",
        prefixes=("hoodie.datasource.hive_sync.", "hoodie.datasource.meta.sync.", "hoodie.datasource.meta_sync.",
                  "hoodie.meta.sync.", "hoodie.meta_sync.", "hoodie.datasource.adb.", "hoodie.aws.glue.",
                  "hoodie.gcp.bigquery.", "hive_sync."),
        switches={"hoodie.datasource.hive_sync.enable": _FALSE, "hoodie.datasource.meta.sync.enable": _FALSE,
                  "hoodie.meta.sync.enable": _FALSE, "hive_sync.enabled": _FALSE, "hive_sync.enable": _FALSE}),
    # clustering rewrites file groups into another layout, never the rows
    HudiFeature(
        "clustering", "warning",
        "hudi-py does not cluster: the bucket index keeps one file group per bucket, and clustering would only "
        "lay the same rows out again",
        prefixes=("hoodie.clustering.", "clustering.", "hoodie.layout.optimize."),
        switches={"hoodie.clustering.inline": _FALSE, "hoodie.clustering.async.enabled": _FALSE,
                  "hoodie.clustering.schedule.inline": _FALSE, "clustering.schedule.enabled": _FALSE,
                  "clustering.async.enabled": _FALSE, "hoodie.layout.optimize.enable": _FALSE}),
    # metrics and commit callbacks report on commits, they do not make them
    HudiFeature(
        "metrics reporting", "warning", "hudi-py reports no metrics; `hudi-py timeline PATH` lists every commit "
        "with the rows and bytes it wrote",
        prefixes=("hoodie.metrics.",), switches={"hoodie.metrics.on": _FALSE}),
    HudiFeature(
        "write commit callbacks", "warning", "hudi-py calls no callback; poll HudiTable.timeline() or read the "
        "table incrementally to learn of new commits",
        prefixes=("hoodie.write.commit.callback.",), switches={"hoodie.write.commit.callback.on": _FALSE}),
    # these limits only change how rows are spread over files (small files: hoodie.parquet.small.file.limit)
    HudiFeature(
        "file and log block sizing", "warning",
        "the bucket index fixes the file groups (hoodie.bucket.index.num.buckets per partition); the SIMPLE indexes "
        "size new file groups by hoodie.parquet.max.file.size; other sizes follow from the data",
        keys=_keys("hoodie.parquet.block.size",
                   "hoodie.parquet.page.size", "hoodie.parquet.compression.ratio", "hoodie.logfile.max.size",
                   "hoodie.logfile.data.block.max.size", "hoodie.logfile.to.parquet.compression.ratio",
                   "write.parquet.max.file.size",
                   "write.parquet.block.size", "write.parquet.page.size", "write.log.max.size",
                   "write.log_block.size", "write.task.max.size", "write.batch.size")),
    # when and how a clean is planned does not change which file versions the cleaning policy keeps
    HudiFeature(
        "asynchronous and scheduled cleaning", "warning",
        "hudi-py cleans inline after every commit (hoodie.clean.automatic; incrementally as "
        "hoodie.clean.incremental.enabled says); which file versions a clean keeps is set by hoodie.clean.policy "
        "and its retained count",
        keys=_keys("hoodie.clean.trigger.strategy", "hoodie.clean.trigger.max.commits", "hoodie.clean.max.commits",
                   "hoodie.clean.multiple.enabled", "hoodie.clean.allow.multiple"),
        harmless={"hoodie.clean.async.enabled": _FALSE, "hoodie.clean.async": _FALSE,
                  "hoodie.clean.delete.bootstrap.base.file": _FALSE,
                  "hoodie.cleaner.delete.bootstrap.base.file": _FALSE}),
    # a failed write is never visible; the policy only says when its files go
    HudiFeature(
        "the failed-writes cleaning policy", "warning",
        "hudi-py rolls back failed writes itself (an expired heartbeat, hoodie.client.heartbeat.timeout.secs, "
        "marks a write as failed), as Apache Hudi's LAZY policy does",
        harmless={"hoodie.clean.failed.writes.policy": frozenset({"lazy"}),
                  "hoodie.cleaner.policy.failed.writes": frozenset({"lazy"})}),
    # archiving moves instants, never data; batching and threads do not change which instants move
    HudiFeature(
        "asynchronous archiving and its batching", "warning",
        "hudi-py archives inline after every commit (hoodie.archive.automatic) as hoodie.keep.min.commits and "
        "hoodie.keep.max.commits say",
        keys=_keys("hoodie.commits.archival.batch", "hoodie.archive.beyond.savepoint",
                   "hoodie.timeline.compaction.batch.size"),
        harmless={"hoodie.archive.async": _FALSE}),
    # a compaction never changes what a query returns
    HudiFeature(
        "Apache Hudi's compaction triggers and strategies", "warning",
        "hudi-py schedules a compaction every compaction.delta_commits (hoodie.compact.inline.max.delta.commits) "
        "delta commits and executes it inline, or in the background with compaction.async.enabled; "
        "compaction.schedule.enabled=false turns compaction off",
        keys=_keys("hoodie.compact.inline", "hoodie.compact.schedule.inline", "hoodie.compact.inline.trigger.strategy",
                   "hoodie.compact.inline.max.delta.seconds", "hoodie.compaction.strategy",
                   "hoodie.compaction.target.io", "hoodie.compaction.lazy.block.read",
                   "hoodie.compaction.reverse.log.read", "hoodie.compaction.logfile.size.threshold",
                   "hoodie.compaction.logfile.num.threshold", "hoodie.compaction.daybased.target.partitions",
                   "hoodie.compaction.partition.path.regex", "hoodie.datasource.write.streaming.disable.compaction",
                   "compaction.trigger.strategy", "compaction.delta_seconds", "compaction.timeout.seconds",
                   "compaction.max_memory", "compaction.target_io"),
        prefixes=("hoodie.log.compaction.",)),
    # how Apache Hudi's own writer runs (executors, memory, markers, its timeline server) has no meaning here
    HudiFeature(
        "Apache Hudi's writer internals", "warning",
        "they tune Apache Hudi's own Spark and Flink writers (executors, memory, markers, the timeline server), "
        "which hudi-py does not use; a failed micro-batch fails the stream, which resumes from its checkpoint",
        keys=_keys("hoodie.datasource.write.row.writer.enable", "hoodie.bulkinsert.sort.mode",
                   "hoodie.bulkinsert.user.defined.partitioner.class",
                   "hoodie.bulkinsert.user.defined.partitioner.sort.columns", "hoodie.write.executor.type",
                   "hoodie.write.buffer.limit.bytes", "hoodie.write.markers.type", "hoodie.rollback.using.markers",
                   "hoodie.datasource.write.streaming.retry.count",
                   "hoodie.datasource.write.streaming.retry.interval.ms", "hoodie.auto.adjust.lock.configs",
                   "hoodie.fail.on.timeline.archiving", "write.bulk_insert.shuffle_input",
                   "write.bulk_insert.sort_input", "write.sort.memory", "write.merge.max_memory",
                   "write.commit.ack.timeout", "write.retry.times", "write.retry.interval.ms", "write.rate.limit"),
        prefixes=("hoodie.embed.timeline.server", "hoodie.filesystem.view.", "hoodie.markers.", "hoodie.memory.",
                  "hoodie.consistency.check.", "hoodie.write.executor.", "hoodie.filesystem.operation.retry."),
        harmless={"hoodie.datasource.write.streaming.ignore.failed.batch": _FALSE}),
    # lock providers without multi-writer concurrency guard nothing hudi-py does; its own commit lock does
    HudiFeature(
        "Apache Hudi's lock providers", "warning",
        "hudi-py writers take their own commit lock (.hoodie/.locks/hudi_py_commit_lock.json)",
        prefixes=("hoodie.write.lock.",)),
    # data skipping and file indexes prune files; a query returns the same rows without them
    HudiFeature(
        "data skipping and file-index listing", "warning",
        "hudi-py prunes partitions and filters rows itself (hoodie.datasource.read.filter.pushdown)",
        keys=_keys("hoodie.enable.data.skipping", "hoodie.file.index.enable", "read.data.skipping.enabled"),
        prefixes=("hoodie.datasource.read.file.index.",)),

    # --- errors: ignoring the key could change what the table holds or what a query returns --------------------
    # a job that relies on Hudi's optimistic concurrency to share the table with JVM writers would commit over them
    HudiFeature(
        "Apache Hudi's multi-writer concurrency control", "error",
        "hudi-py coordinates its own writers through its commit lock (.hoodie/.locks/hudi_py_commit_lock.json), "
        "so several hudi-py writers may write one table at once, but it does not take part in Apache Hudi's "
        "concurrency control: no Apache Hudi writer may write the table while hudi-py does. Remove "
        "hoodie.write.concurrency.mode (or set it to SINGLE_WRITER)",
        prefixes=("hoodie.write.concurrency.",),
        switches={"hoodie.write.concurrency.mode": frozenset({"single_writer"})},
        harmless={"hoodie.write.concurrency.early.conflict.detection.enable": _FALSE}),
    # a commit the validators would refuse would land
    HudiFeature(
        "pre-commit validators", "error",
        "hudi-py runs no validator, so a commit they would refuse would land; check the data before writing",
        prefixes=("hoodie.precommit.validators",)),
    # a bootstrapped table has skeleton files that point at the source data; hudi-py would copy the rows instead
    HudiFeature(
        "bootstrapping an existing dataset", "error",
        "hudi-py does not bootstrap; write the dataset with hoodie.datasource.write.operation=bulk_insert",
        prefixes=("hoodie.bootstrap.",)),
    # partitions Apache Hudi would delete would stay
    HudiFeature(
        "partition TTL", "error", "hudi-py deletes no partition by age; delete old rows with a delete write",
        prefixes=("hoodie.partition.ttl.",), harmless={"hoodie.partition.ttl.inline": _FALSE}),
    # partition paths would differ from what the key generator computes
    HudiFeature(
        "time-based key generator settings hudi-py does not read", "error",
        "hudi-py reads the timestamp key generator's settings docs/options.md lists (under their "
        "hoodie.keygen.timebased.* names or the older hoodie.deltastreamer.keygen.timebased.* ones) with Hudi's own "
        "date-time parser; remove the others",
        prefixes=("hoodie.keygen.timebased.", "hoodie.deltastreamer.keygen.timebased."),
        harmless={"hoodie.datasource.write.keygenerator.consistent.logical.timestamp.enabled": _FALSE,
                  "hoodie.keygen.datetime.parser.class": _DEFAULT_DATE_TIME_PARSER,
                  "hoodie.deltastreamer.keygen.datetime.parser.class": _DEFAULT_DATE_TIME_PARSER}),
    # Hudi would keep duplicate keys of a batch
    HudiFeature(
        "Apache Hudi's deduplication switches", "error",
        "hudi-py combines the rows of every write by record key (by the table's hoodie.record.merge.mode); to drop "
        "incoming rows whose keys the table already has, use hoodie.datasource.insert.dup.policy=drop; remove "
        "these options",
        harmless={"hoodie.combine.before.insert": _TRUE, "hoodie.combine.before.upsert": _TRUE,
                  "hoodie.combine.before.delete": _TRUE}),
    # renamed, dropped or retyped columns would be read differently
    HudiFeature(
        "schema-on-read evolution", "error",
        "hudi-py evolves a schema by adding columns only; write the new schema as new columns",
        harmless={"hoodie.schema.on.read.enable": _FALSE,
                  "hoodie.datasource.write.schema.allow.auto.evolution.column.drop": _FALSE}),
    # the files would not be what the option asks for
    HudiFeature(
        "table storage formats other than hudi-py's", "error",
        "hudi-py writes parquet base files, Hudi log files and UTC instant times, "
        "and archives to .hoodie/archived; remove the option or give it that value",
        harmless={"hoodie.base.file.format": frozenset({"parquet"}),
                  "hoodie.table.base.file.format": frozenset({"parquet"}),
                  "hoodie.table.ro.file.format": frozenset({"parquet"}),
                  "hoodie.table.log.file.format": frozenset({"hoodie_log"}),
                  "hoodie.table.timeline.timezone": frozenset({"utc"}),
                  "hoodie.archivelog.folder": frozenset({"archived"})}),
    # these read options select or shape the rows a read returns
    HudiFeature(
        "read options that select rows or files", "error",
        "hudi-py reads whole commits and merges every file slice; filter the result instead",
        keys=_keys("hoodie.datasource.read.paths", "hoodie.datasource.read.incr.path.glob",
                   "hoodie.datasource.read.incr.filters"),
        harmless={"hoodie.datasource.merge.type": frozenset({"payload_combine"}),
                  "hoodie.datasource.read.schema.use.end.instanttime": _FALSE}),
)

# ================================================================================================================
# NOT IMPLEMENTED YET: families later work implements. Promote one by declaring its keys in the option registry
# (hudi_ds.config.options) and removing the family here.
# ================================================================================================================
NOT_IMPLEMENTED_YET: tuple[HudiFeature, ...] = (
    # hudi-py maintains the metadata table's files, column_stats, partition_stats and record_index partitions only,
    # so these settings (its other indexes: bloom filters, secondary and expression indexes, tuning) change nothing
    HudiFeature(
        "the metadata table's indexes and tuning (not implemented yet)", "warning",
        "hudi-py maintains the metadata table's files, column_stats, partition_stats and record_index partitions "
        "only (hoodie.metadata.enable, hoodie.metadata.index.column.stats.enable, "
        "hoodie.metadata.index.partition.stats.enable, hoodie.metadata.record.index.enable); its other indexes are "
        "not written",
        prefixes=("hoodie.metadata.", "metadata.")),
    # the indexes hudi-py writes with (BUCKET, SIMPLE, BLOOM, GLOBAL_*) have no use for these settings: its lookups
    # read the keys, and its bloom filters take Hudi's default sizes
    HudiFeature(
        "record-level and HBase indexes, index tuning (not implemented yet)", "warning",
        "hudi-py writes with the BUCKET, SIMPLE, BLOOM, GLOBAL_SIMPLE, GLOBAL_BLOOM and RECORD_INDEX indexes "
        "(hoodie.index.type), "
        "looks keys up by reading them and sizes bloom filters as Hudi's defaults do; these settings change neither",
        keys=_keys("hoodie.index.class", "hoodie.bucket.index.query.pruning"),
        prefixes=("hoodie.bloom.index.", "hoodie.index.bloom.", "hoodie.simple.index.", "hoodie.global.simple.index.",
                  "hoodie.global.index.", "hoodie.record.index.", "hoodie.index.hbase.", "hoodie.hbase.index.",
                  "index.")),
    # they change which bucket a key lands in: keys would be written where other writers do not look
    HudiFeature(
        "consistent-hashing and partition-level bucket indexes (not implemented yet)", "error",
        "hudi-py hashes the record key into hoodie.bucket.index.num.buckets buckets per partition (the SIMPLE "
        "bucket engine); remove these options",
        keys=_keys("hoodie.bucket.index.hash.field", "hoodie.bucket.index.max.num.buckets",
                   "hoodie.bucket.index.min.num.buckets", "hoodie.bucket.index.split.threshold",
                   "hoodie.bucket.index.merge.threshold"),
        prefixes=("hoodie.bucket.index.partition.",)),
    # they decide which version of a record wins a merge
    HudiFeature(
        "custom mergers and Spark SQL's partial-update switches (not implemented yet)", "error",
        "hudi-py merges by hoodie.record.merge.mode (EVENT_TIME_ORDERING or COMMIT_TIME_ORDERING) and "
        "hoodie.table.partial.update.mode (a write's missing columns follow it); remove these options",
        keys=_keys("hoodie.datasource.write.record.merger.impls",
                   "hoodie.write.record.merge.custom.implementation.classes",
                   "record.merger.impls", "hoodie.write.partial.update.schema",
                   "hoodie.spark.sql.merge.into.partial.updates",
                   "hoodie.datasource.write.payload.type", "hoodie.compaction.payload.type"),
        prefixes=("hoodie.record.merge.property.",)),
)

# Apache Hudi's other index types, and why hudi-py does not write with them yet
UNWRITTEN_INDEXES = {
    "HBASE": "it lives in an external HBase table; use GLOBAL_SIMPLE or GLOBAL_BLOOM",
    "INMEMORY": "it is Flink's and Java's in-memory index; use SIMPLE or BLOOM",
    "FLINK_STATE": "it is Flink's state index; use SIMPLE or BLOOM",
}

# Accepted and ignored: parallelism and task counts of Apache Hudi's own Spark/Flink writers, which hudi-py does
# not run, schema reconciliation (hudi-py always reconciles a batch with the table's schema: it keeps the table's
# columns and appends new ones) and a key Spark passes along. Nothing to say about them.
TUNING_KEYS = frozenset({
    "hoodie.upsert.shuffle.parallelism", "hoodie.insert.shuffle.parallelism", "hoodie.bulkinsert.shuffle.parallelism",
    "hoodie.delete.shuffle.parallelism", "hoodie.clean.parallelism", "hoodie.cleaner.parallelism",
    "hoodie.archive.delete.parallelism", "hoodie.finalize.write.parallelism", "hoodie.rollback.parallelism",
    "hoodie.file.listing.parallelism", "hoodie.global.simple.index.parallelism", "read.tasks",
    "write.bucket_assign.tasks", "write.index_bootstrap.tasks", "compaction.tasks", "clustering.tasks", "paths",
    "hoodie.datasource.write.reconcile.schema",
})

_ALL = FEATURES + NOT_IMPLEMENTED_YET


def feature_of(key: str) -> HudiFeature | None:
    """The Apache Hudi feature a (lower-case) key configures, if hudi-py knows it; exact keys before prefixes,
    the longest prefix first."""
    exact = [f for f in _ALL if f.names(key)]
    if exact:
        return exact[0]
    by_prefix = [(max(len(p) for p in f.prefixes if key.startswith(p)), f) for f in _ALL if key.startswith(f.prefixes)]
    return max(by_prefix, key=lambda pf: pf[0])[1] if by_prefix else None
