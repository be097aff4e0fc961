"""The coordinator: starts an instant, checks conflicts, and completes (or rolls back) the commit.

It runs on the driver. `begin()` pins everything tasks need in a WritePlan; `commit()` takes one
TaskResult per task (the successful attempt's), removes what other attempts wrote, merges copy-on-write
file groups that several tasks changed into one base file each, and publishes the completed instant
atomically (put-if-absent), the single point at which the write becomes visible.
"""

from __future__ import annotations

import json
from collections.abc import Iterable, Sequence
from dataclasses import replace

import pyarrow as pa

from hudi_ds import faults
from hudi_ds.config import TableConfig
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import key_generator_type_name
from hudi_ds.config.writable import check_writable
from hudi_ds.errors import (
    CommitConflictError,
    CommitStateUnknownError,
    ConfigError,
    CorruptTableError,
    InstantStateError,
    InvalidDataError,
)
from hudi_ds.files.compaction_plan import log_targets
from hudi_ds.files.markers import marked_files
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.index.bloom_lookup import BloomLookup, metadata_key_ranges
from hudi_ds.index.bucket import bucket_of_file_id, check_bucket_file_ids
from hudi_ds.index.choice import (
    BLOOM_INDEXES,
    BUCKET,
    RECORD_INDEX,
    is_global,
    write_index,
    writes_bloom_filters,
)
from hudi_ds.index.lookup import KeyLookup, holds_prefixed_keys
from hudi_ds.index.record_index import RecordIndexLookup
from hudi_ds.keys.keygen import integer_key_column
from hudi_ds.keys.partition_scheme import with_timestamp_settings
from hudi_ds.metadata import secondary_index_sync
from hudi_ds.metadata.record_index_sync import instant_changes
from hudi_ds.metadata.sync import commit_changes, sync_instant
from hudi_ds.read.schema_resolver import ARROW_SCHEMA_KEY, encode_arrow_schema
from hudi_ds.recovery.heartbeat import stop_heartbeat, touch_heartbeat
from hudi_ds.recovery.rollback import ownership, rollback_pending
from hudi_ds.schema.avro import arrow_to_avro
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S, temp_dir
from hudi_ds.table_format import TableFormat
from hudi_ds.timeline import Timeline, new_instant_time
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_ds.timeline.moving import on_latest_timeline
from hudi_ds.upgrade import require_version
from hudi_ds.write import delete_partition
from hudi_ds.write.change_data import write_change_data
from hudi_ds.write.cross_task import settle_cross_task_deletes
from hudi_ds.write.file_sizing import InsertPlacement, InsertSizing
from hudi_ds.write.messages import TaskResult, WrittenFile
from hudi_ds.write.plan import (
    OPERATION_TYPES,
    OPERATIONS,
    GroupTarget,
    WritePlan,
    check_operation,
    write_action,
)
from hudi_ds.write.rebased_logs import rebase_logs
from hudi_ds.write.shared_groups import merge_shared_groups
from hudi_ds.write.tagging import keys_new_in_several_tasks

BUCKETS_KEY = "hoodie.bucket.index.num.buckets"  # recorded in each commit's extra metadata
_INSERTS = "<inserts>"  # a write placed new keys (lookup indexes: see _touched)

def _check_bucket_count(config: TableConfig, timeline: Timeline) -> None:
    """The bucket count routes every key; hoodie.properties saying another count than the table was written with
    (a hand edit, a table re-created over an old timeline) would send keys to new file groups: duplicates. The
    file groups themselves are checked by check_bucket_file_ids."""
    count = config.num_buckets
    if count is None:
        return
    problem = None
    for inst in reversed([c for c in timeline.commits() if c.is_completed]):
        written = timeline.commit_metadata(inst).extra_metadata.get(BUCKETS_KEY)
        if written is None:
            continue  # a compaction, or a commit of another writer: look further back
        if str(written) != str(count):
            problem = f"commit {inst.requested_time} was written with {written}"
        break
    if problem is not None:
        raise CorruptTableError(
            f"hoodie.properties says the table has {count} buckets, but {problem}: writing now would duplicate "
            "keys. Restore hoodie.bucket.index.num.buckets (or the whole file from .hoodie/hoodie.properties.backup)")


def _slotted_slices(view: FileSystemView, lookup: bool) -> dict[tuple[str, int], FileSlice]:
    """The latest slices by (partition, bucket), or with a lookup index by (partition, slot): their position
    among the partition's slices in file id order."""
    if not lookup:
        return {(sl.partition, b): sl for sl in view.latest_slices()
                if (b := bucket_of_file_id(sl.file_id)) is not None}
    by_partition: dict[str, list[FileSlice]] = {}
    for sl in sorted(view.latest_slices(), key=lambda s: (s.partition, s.file_id)):
        by_partition.setdefault(sl.partition, []).append(sl)
    return {(p, slot): sl for p, slices in by_partition.items() for slot, sl in enumerate(slices)}


def _group_targets(view: FileSystemView,
                   slices: dict[tuple[str, int], FileSlice]) -> dict[tuple[str, int], GroupTarget]:
    # Compaction plans are read from a fresh listing (taken after this write claimed its instant): a plan
    # scheduled before that is always seen, and its file groups get their logs in the plan's new slice
    # (base instant C), so the compaction, which reads only the previous slice, never loses them.
    fresh = view.config.format.load_timeline(view.timeline.storage)
    compacting = log_targets(fresh, view.visibility.committed)
    targets: dict[tuple[str, int], GroupTarget] = {}
    for key, sl in slices.items():
        instant = sl.base_instant or (sl.log_files[0].instant if sl.log_files else None)
        if instant is None:
            continue
        base = sl.base_file.path if sl.base_file else None
        newer = compacting.get((sl.partition, sl.file_id))
        if newer is not None and newer[0] > instant:
            instant, base = newer
        versions = [lf.version for lf in sl.log_files if lf.instant == instant]
        targets[key] = GroupTarget(sl.file_id, instant, base, max(versions, default=0) + 1)
    return targets


def _key_lookup(storage: Storage, config: TableConfig, index: str, options: HudiOptions, schema: pa.Schema,
                view: FileSystemView,
                slices: dict[tuple[str, int], FileSlice]) -> KeyLookup:
    by_partition: dict[str, list[FileSlice]] = {}
    for (partition, _), sl in sorted(slices.items()):
        by_partition.setdefault(partition, []).append(sl)
    ordering = config.merge_ordering_field()  # commit-time ordering: none
    # Hudi moves keys between partitions of partitioned tables only (else a global index tags the key it finds)
    moves = bool(config.partition_fields) and (
        options.bloom_update_partition_path if index == "GLOBAL_BLOOM" else options.update_partition_path)
    integer_key = integer_key_column(config.key_generator, config.record_key_fields, config.partition_fields,
                                     schema) if config.populate_meta_fields else None
    if index == RECORD_INDEX:
        return RecordIndexLookup(True, options.record_index_update_partition_path,
                                 {p: tuple(sls) for p, sls in by_partition.items()}, view.visibility,
                                 schema.field(ordering) if ordering and ordering in schema.names else None,
                                 integer_key=schema.field(integer_key) if integer_key else None,
                                 data_timeline=view.timeline, first_value=config.first_value)
    kind = BloomLookup if index in BLOOM_INDEXES else KeyLookup
    lookup = kind(is_global(index), moves,
                  {p: tuple(sls) for p, sls in by_partition.items()}, view.visibility,
                  schema.field(ordering) if ordering and ordering in schema.names else None,
                  virtual_keys=None if config.populate_meta_fields else tuple(config.record_key_fields),
                  integer_key=schema.field(integer_key) if integer_key else None, first_value=config.first_value)
    if isinstance(lookup, BloomLookup) and options.bloom_use_metadata:
        return replace(lookup, key_ranges=metadata_key_ranges(storage, config, view.timeline))
    return lookup


def _one_field_complex_key(config: TableConfig) -> bool:
    """A ComplexKeyGenerator of one record key field, whose key form differs between Hudi releases."""
    kind = key_generator_type_name(config.key_generator) if config.key_generator else None
    return kind == "COMPLEX" and len(config.record_key_fields) == 1


def _insert_placement(options: HudiOptions, timeline: Timeline, slices: dict[tuple[str, int], FileSlice],
                      groups: dict[tuple[str, int], GroupTarget], is_mor: bool) -> InsertPlacement:
    """Small files: base files below the limit in slices without log files (Hudi's rule for lookup indexes, which
    cannot find keys in logs; the rewrite merges the base file alone) that no pending compaction moved on. On
    merge-on-read, as Hudi's SparkUpsertDeltaCommitPartitioner, only the smallest
    `hoodie.merge.small.file.group.candidates.limit` of a partition (ties in slot order); copy-on-write fills
    every small file (UpsertPartitioner)."""
    sizing = InsertSizing.of(options, timeline)
    small: dict[str, list[tuple[int, int]]] = {}
    for (partition, slot), sl in sorted(slices.items()):
        base = sl.base_file
        target = groups.get((partition, slot))
        if (base is not None and not sl.log_files and base.size < sizing.small_file_limit and target is not None
                and target.base_instant == sl.base_instant):
            small.setdefault(partition, []).append((slot, base.size))
    if is_mor:
        small = {p: sorted(v, key=lambda f: f[1])[:options.small_file_candidates] for p, v in small.items()}
    return InsertPlacement(sizing, {p: tuple(v) for p, v in small.items() if v})


Group = tuple[str, int | str | None]


def _touched(plan: WritePlan, files: Iterable[WrittenFile | WriteStat], inserts: bool = True) -> set[Group]:
    """The file groups written files belong to, as two writers' conflict check compares them: (partition, bucket)
    on bucket tables, where two writers creating one bucket make two file ids; (partition, file id) with a lookup
    index, plus (partition, INSERTS) for a write that placed new keys: two writers inserting into one partition (any
    partition, global indexes) might both insert one key, into two file groups."""
    out: set[Group] = set()
    for f in files:
        partition = (f.partition if isinstance(f, WrittenFile) else f.partition_path) or ""
        if plan.lookup is None:
            out.add((partition, f.bucket if isinstance(f, WrittenFile) else bucket_of_file_id(f.file_id)))
            continue
        out.add((partition, f.file_id))
        if inserts and f.num_inserts:
            out.add(("" if plan.lookup.global_index else partition, _INSERTS))
    return out


def _targets_by_group(plan: WritePlan) -> dict[Group, GroupTarget]:
    """The plan's targets under the keys `_touched` gives."""
    if plan.lookup is None:
        return dict(plan.groups)  # type: ignore[arg-type]
    return {(p, t.file_id): t for (p, _), t in plan.groups.items()}


def remove_unreported_files(storage: Storage, plan: WritePlan, results: Sequence[TaskResult]) -> list[str]:
    """Delete data files of this instant that no successful task reported (failed, retried or speculative
    attempts), so readers that list files (hudi-rs) never see them."""
    reported = {f.path for r in results for f in r.files} | {c.path for r in results for c in r.change_data}
    stray = [rel for rel in marked_files(storage, plan.instant)
             if rel not in reported and ownership(storage, rel, plan.instant) == "own"]
    for rel in stray:
        storage.delete(rel)
    return stray


def _pending(storage: Storage, fmt: TableFormat, instant: str) -> Timeline:
    """The timeline, if `instant` is still pending on it."""
    timeline = fmt.load_timeline(storage)
    mine = timeline.find(instant)
    if mine is None or mine.is_completed:
        raise CommitStateUnknownError(
            f"instant {instant} was rolled back by another writer (its heartbeat looked dead: see "
            "hoodie.client.heartbeat.timeout.secs) or completed by another process; nothing was committed by this "
            "call: check the timeline and retry the write")
    return timeline


class Coordinator:
    """Driver-side commit protocol for one table."""

    def __init__(self, storage: Storage, config: TableConfig, metadata_compact_every: int | None = None) -> None:
        self.storage = storage
        self.config = config
        # hoodie.metadata.compact.max.delta.commits: the registry's default unless the writer's options say
        self.metadata_compact_every = metadata_compact_every or HudiOptions().metadata_compact_max_delta_commits

    def begin(self, operation: str, schema: pa.Schema, *, extra: dict[str, str] | None = None,
              options: HudiOptions | None = None, **plan_options: object) -> WritePlan:
        """Claim an instant and plan the write. `options` name the index (when the table records none) and size
        the file groups of a lookup index."""
        if operation not in OPERATIONS:
            raise ConfigError(f"unknown operation {operation!r}; use one of {', '.join(OPERATIONS)}")
        options = options if options is not None else HudiOptions()
        config = with_timestamp_settings(self.config, options)
        check_writable(config)
        check_operation(operation, self.config.record_key_fields)
        index = write_index(self.config, options)
        fmt = self.config.format
        timeline = fmt.load_timeline(self.storage)
        writer = timeline.writer()
        action = write_action(operation, self.config.is_mor)
        last = timeline.last_instant_time()
        while True:
            instant = new_instant_time(after=last)
            touch_heartbeat(self.storage, instant)  # alive before it exists: no writer may take it for dead
            if writer.create_requested(instant, action):
                break
            # another writer drew the same instant time and owns it now, heartbeat included: leave that alone
            last = instant
        inflight = CommitMetadata(operation_type=OPERATION_TYPES[operation], extra_metadata=dict(extra or {}))
        writer.transition_to_inflight(instant, action, fmt.encode_commit_metadata(inflight, action))
        try:
            timeline, (view, slices, groups) = on_latest_timeline(lambda: fmt.load_timeline(self.storage),
                                                                  lambda tl: (tl, self._groups(tl, index)))
        except CorruptTableError:
            self.abort_instant(instant)
            raise
        known = sorted(i.requested_time for i in timeline.commits())  # the commits `groups` reflect
        lookup = placement = None
        if index != BUCKET and operation != "delete_partition":  # it tags no key
            lookup = _key_lookup(self.storage, self.config, index, options, schema, view, slices)
            placement = _insert_placement(options, timeline, slices, groups, config.is_mor)
        policy = options.duplicate_policy() if operation == "insert" and self.config.record_key_fields else "none"
        existing = None
        if policy != "none":  # the keys a bucket table holds, read partition by partition as a simple index would
            existing = lookup or _key_lookup(self.storage, self.config, "SIMPLE", options, schema, view, slices)
        return WritePlan(
            storage=self.storage, instant=instant, operation=operation, config=config, schema=schema,
            groups=groups, known_commits=tuple(known), lookup=lookup, placement=placement,
            duplicate_policy=policy, existing_keys=existing,
            bloom_filters=writes_bloom_filters(self.config, index),
            prefixed_keys=lookup is not None and _one_field_complex_key(self.config)
            and self.config.populate_meta_fields and holds_prefixed_keys(
                self.storage, slices.values(), self.config.record_key_fields[0]),
            **plan_options,  # type: ignore[arg-type]
        )

    def _groups(self, timeline: Timeline, index: str) -> tuple[FileSystemView, dict[tuple[str, int], FileSlice],
                                                                 dict[tuple[str, int], GroupTarget]]:
        """The file groups to write to; never over a committed file that is missing (the next write would hide
        the loss)."""
        view = FileSystemView(self.storage, self.config, timeline, Visibility.of(timeline, None, timeline.layout))
        if self.config.num_buckets is not None:
            check_bucket_file_ids(view.groups, self.config.num_buckets)
        _check_bucket_count(self.config, timeline)
        slices = _slotted_slices(view, index != BUCKET)
        groups = _group_targets(view, slices)
        view.check_committed_files(view.committed_paths())
        return view, slices, groups

    def commit(self, plan: WritePlan, results: Sequence[TaskResult], extra: dict[str, str] | None = None) -> str:
        fmt = self.config.format
        timeline = _pending(self.storage, fmt, plan.instant)
        repeated = keys_new_in_several_tasks(results, plan.lookup.global_index) if plan.lookup else []
        if repeated:
            self.abort(plan)
            raise InvalidDataError(
                f"{len(repeated)} new record key(s) (first: {repeated[:3]}) came in several Spark partitions of one "
                "write; with a lookup index (hoodie.index.type SIMPLE, BLOOM or their GLOBAL_ forms) each task places "
                "its new keys, so they would be written twice. Nothing was committed: drop the duplicates "
                "(dropDuplicates on the key) or repartition the data by the record key, and write again")
        dropped: list[str] = []
        if plan.operation == "delete_partition":  # the tasks only name the partitions of their rows
            dropped = self._partitions_to_delete(plan, timeline, results)
            results = [TaskResult(r.task_id) for r in results]
        remove_unreported_files(self.storage, plan, results)
        shared = {(d.partition, d.file_id) for r in results for d in r.deferred}
        results = merge_shared_groups(self.storage, plan, list(results))
        results = rebase_logs(self.storage, plan, results)
        results = settle_cross_task_deletes(self.storage, plan, results)
        token = max((r.task_id for r in results), default=0) + 1
        change_data = write_change_data(self.storage, plan, results, timeline, f"{token}-0-0", shared)
        files = [f for r in results for f in r.files]
        partitions = sorted({p for r in results for p in r.partitions}) or dropped
        meta = self._metadata(plan, results, extra, change_data)
        if plan.is_overwrite:
            view = FileSystemView(self.storage, self.config, timeline, Visibility.of(timeline, None, timeline.layout))
            new_ids = {(f.partition, f.file_id) for f in files}
            replaced: dict[str, list[str]] = {}
            for (partition, file_id) in view.groups:
                if (partition, file_id) in new_ids:
                    continue
                if plan.operation == "insert_overwrite_table" or partition in partitions:
                    replaced.setdefault(partition, []).append(file_id)
            meta = replace(meta, partition_to_replace_file_ids=replaced)
        # checking for conflicts and publishing is one step (two writers that both checked first would both win),
        # and a rollback takes the same lock (it would otherwise delete files of a commit completing meanwhile)
        with self.storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
            latest = _pending(self.storage, fmt, plan.instant)
            conflict = require_version(self.storage, self.config) or self._conflict(
                plan, latest, _touched(plan, files), partitions)
            if conflict is None:
                secondary = secondary_index_sync.instant_changes(self.storage, self.config, latest, plan.instant,
                                                                 meta)
                sync_instant(self.storage, latest, plan.instant, commit_changes(meta), self.metadata_compact_every,
                             instant_changes(self.storage, self.config, latest, meta), secondary)
                faults.pause_point("commit_publishing")
                latest.writer().complete(plan.instant, plan.action, fmt.encode_commit_metadata(meta, plan.action))
        if conflict is not None:
            self.abort(plan)
            raise CommitConflictError(f"{conflict}; this write was rolled back and is safe to retry")
        self._cleanup(plan.instant)
        return plan.instant

    def _metadata(self, plan: WritePlan, results: Sequence[TaskResult], extra: dict[str, str] | None,
                  change_data: dict[tuple[str, str], dict[str, int]]) -> CommitMetadata:
        stats: dict[str, list[WriteStat]] = {}
        change_data = dict(change_data)
        for r in results:
            for f in r.files:
                stat = WriteStat(
                    file_id=f.file_id, path=f.path, prev_commit=f.prev_commit, num_writes=f.num_writes,
                    num_deletes=f.num_deletes, num_update_writes=f.num_updates, num_inserts=f.num_inserts,
                    total_write_bytes=f.size, partition_path=f.partition, file_size_in_bytes=f.size,
                    is_log=f.is_log, column_ranges=f.column_ranges,
                )
                if f.is_log:
                    stat.log_version = f.log_version
                    stat.base_file = f.base_file
                    stat.log_files = [f.path.rsplit("/", 1)[-1]]
                    stat.total_log_blocks = f.log_blocks
                    stat.total_log_records = f.num_writes + f.num_deletes
                stat.cdc_stats = change_data.pop((f.partition, f.file_id), None)  # on the group's first stat
                stats.setdefault(f.partition, []).append(stat)
        for r in results:
            for p in r.partitions:
                stats.setdefault(p, [])
        extra_meta: dict[str, str] = {}
        if len(plan.schema):  # none before the table's first rows (a delete without the ordering column, an empty write)
            avro = arrow_to_avro(plan.schema, plan.config.name)
            extra_meta = {"schema": json.dumps(avro), ARROW_SCHEMA_KEY: encode_arrow_schema(plan.schema)}
        if plan.config.num_buckets is not None:
            extra_meta[BUCKETS_KEY] = str(plan.config.num_buckets)
        extra_meta.update(extra or {})
        return CommitMetadata(
            partition_to_write_stats=stats, compacted=False, extra_metadata=extra_meta,
            operation_type=OPERATION_TYPES[plan.operation],
            partition_to_replace_file_ids={} if plan.is_overwrite else None,
        )

    def _conflict(self, plan: WritePlan, timeline: Timeline, touched: set[Group],
                  partitions: list[str]) -> str | None:
        """Optimistic concurrency: a commit that completed since begin() and touched the same file groups (or,
        for overwrites, the same partitions) wins; this write must retry. The conflict, or None."""
        known = set(plan.known_commits)
        for inst in timeline.commits():
            if inst.requested_time in known or inst.requested_time == plan.instant:
                continue
            meta = timeline.commit_metadata(inst)
            theirs = _touched(plan, meta.write_stats(), inserts=not meta.compacted)  # a compaction adds no key
            overlap = touched & theirs
            targets = _targets_by_group(plan)
            if meta.compacted and not plan.is_overwrite and all(
                    (g := targets.get(k)) is not None and g.base_instant == inst.requested_time for k in overlap):
                continue  # this write put its logs into the new slice of that compaction: no conflict
            if plan.operation in ("insert_overwrite_table", "delete_partition") or inst.action == "replacecommit":
                overlap |= {(p, -1) for p in partitions if any(t[0] == p for t in theirs)}
            if overlap or (plan.operation == "insert_overwrite_table" and theirs):
                return (f"commit {inst.requested_time} completed while this write ({plan.instant}) was running and "
                        f"touched the same file groups ({sorted(overlap, key=str)[:3]}...)")
        return None

    def _partitions_to_delete(self, plan: WritePlan, timeline: Timeline, results: Sequence[TaskResult]) -> list[str]:
        """The partitions a delete_partition replaces (write.delete_partition); refused, the instant rolled back,
        while a pending compaction covers one of them."""
        view = FileSystemView(self.storage, self.config, timeline, Visibility.of(timeline, None, timeline.layout))
        existing = {partition for partition, _ in view.groups}
        dropped = delete_partition.resolve(plan.partitions_to_delete, (p for r in results for p in r.partitions),
                                           existing)
        try:
            delete_partition.check_no_pending_compaction(timeline, dropped)
        except InstantStateError:
            self.abort(plan)
            raise
        return dropped

    def abort(self, plan: WritePlan) -> None:
        self.abort_instant(plan.instant)

    def abort_instant(self, instant: str) -> None:
        rollback_pending(self.storage, self.config, instant)
        self._cleanup(instant)

    def _cleanup(self, instant: str) -> None:
        self.storage.delete_dir(temp_dir(instant))
        stop_heartbeat(self.storage, instant)
