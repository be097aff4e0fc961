"""Keeping the metadata table's `files` partition in step with the data table, as Hudi 1.x's
HoodieBackedTableMetadataWriter does.

Every data instant that adds or removes files (commit, deltacommit, replacecommit, compaction, clean) writes a
deltacommit with the same instant time into the metadata table, before the data instant completes: one log file
holding the changed partitions' `files` records and the partition list. Callers hold the data table's commit
lock, so metadata instants are written one at a time and complete in the data timeline's order.

A metadata deltacommit whose data instant is gone (rolled back, or its writer killed and rolled back) or is
being written again (a retried compaction or clean) is rolled back first, as Hudi rolls back the metadata
table's failed writes; a rollback of a data instant rolls back its deltacommit (or, once a compaction folded it
into a base file, records the removed files as deleted).
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from hudi_ds.config.table_config import load_config
from hudi_ds.errors import CommitConflictError
from hudi_ds.files.naming import parse_log_file
from hudi_ds.metadata import column_stats_sync, partition_stats_sync, secondary_index_sync
from hudi_ds.metadata import records as md
from hudi_ds.metadata.column_ranges import FileRanges
from hudi_ds.metadata.compaction import compact_if_due, undo_pending
from hudi_ds.metadata.hfiles import encode_log_block
from hudi_ds.metadata.index_defs import column_stats_fields
from hudi_ds.metadata.layout import (
    FILES_FILE_ID,
    MetadataTable,
    is_init_instant,
    log_name,
    metadata_table_of,
)
from hudi_ds.metadata.listing import compacted_before, is_folded
from hudi_ds.metadata.record_index_sync import SettledChanges, write_logs
from hudi_ds.storage import Storage
from hudi_ds.timeline import Instant, Timeline, new_instant_time
from hudi_ds.timeline.avro_models import (
    rollback_metadata,
    rollback_partition_metadata,
    rollback_plan,
    rollback_request,
)
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat

DELTA = "deltacommit"


@dataclass(frozen=True)
class FileChanges:
    """What one data instant changed in one partition: files added (name -> size) and deleted (names), and the
    column ranges the write tasks reported of the base files added (name -> ranges); `dropped`: a delete_partition
    removed the partition, or a clean deleted it whole (it leaves the partition list; after a delete_partition its files
    stay listed until the clean deletes them)."""

    added: dict[str, int] = field(default_factory=dict)
    deleted: tuple[str, ...] = ()
    ranges: dict[str, FileRanges] = field(default_factory=dict)
    dropped: bool = False


def commit_changes(meta: CommitMetadata) -> dict[str, FileChanges]:
    """The files a commit-like instant added, per partition (replaced file groups stay listed until a clean
    deletes their files, as in Hudi)."""
    out: dict[str, FileChanges] = {}
    for partition, stats in meta.partition_to_write_stats.items():
        changes = out.setdefault(partition, FileChanges())
        for stat in stats:
            if stat.path:
                name = stat.path.rsplit("/", 1)[-1]
                changes.added[name] = stat.file_size_in_bytes or stat.total_write_bytes
                if stat.column_ranges is not None:
                    changes.ranges[name] = stat.column_ranges
    out = {p: c for p, c in out.items() if c.added}
    if meta.operation_type == "DELETE_PARTITION":  # HoodieTableMetadataUtil.getPartitionsDeleted
        out.update({p: FileChanges(dropped=True) for p in meta.partition_to_replace_file_ids or {}})
    return out


def deleted_changes(deleted: Mapping[str, Iterable[str]], dropped: Iterable[str] = ()) -> dict[str, FileChanges]:
    """Partition -> file names a clean or rollback deleted; `dropped`: partitions a clean deleted whole."""
    gone = set(dropped)
    return {p: FileChanges(deleted=tuple(names), dropped=p in gone) for p, names in deleted.items() if names}


def change_records(changes: Mapping[str, FileChanges]) -> dict[str, dict[str, Any]]:
    """The files partition's records of one data instant: one per changed partition, and the partition list
    when files were added (a new partition appears in it with its first file)."""
    out = {md.partition_key(p): md.file_list_record(p, c.added, c.deleted) for p, c in changes.items()
           if c.added or c.deleted}
    grown = [p for p, c in changes.items() if c.added]
    dropped = [p for p, c in changes.items() if c.dropped]
    if grown:
        out[md.ALL_PARTITIONS_KEY] = md.partition_list_record(grown)
    elif dropped:
        out[md.ALL_PARTITIONS_KEY] = md.partition_list_record(dropped, deleted=True)
    return out


def roll_back_deltacommit(mdt: MetadataTable, mdt_timeline: Timeline, inst: Instant,
                          rollback_time: str | None = None) -> str:
    """Delete what the deltacommit `inst` wrote and its instant files, and record a rollback instant (at
    `rollback_time`, the data table's rollback, when the metadata timeline has no later instant)."""
    partitions = [p for p in (md.FILES, md.COLUMN_STATS, md.PARTITION_STATS, md.RECORD_INDEX)
                  if mdt.storage.exists(p)] + secondary_index_sync.partitions(mdt)
    removed = [e.path for p in partitions for e in mdt.storage.list(p)
               if (lf := parse_log_file(p, e.name)) is not None and lf.instant == inst.requested_time]
    for rel in removed:
        mdt.storage.delete(rel)
    writer = mdt.fmt.timeline_writer(mdt.storage)
    writer.delete_instant_files(inst.requested_time, inst.action)
    last = mdt_timeline.last_instant_time()
    if rollback_time is None or (last is not None and rollback_time <= last):
        rollback_time = new_instant_time(after=max(filter(None, (last, rollback_time))))
    full = {p: [mdt.storage.full(r) for r in removed if r.startswith(f"{p}/")] for p in partitions}
    plan = rollback_plan(inst.requested_time, inst.action,
                         [rollback_request(p, files_to_be_deleted=full[p]) for p in partitions])
    meta = rollback_metadata(rollback_time, [(inst.requested_time, inst.action)],
                             {p: rollback_partition_metadata(p, full[p]) for p in partitions})
    writer.write_avro_completed(rollback_time, "rollback", plan, meta)
    return rollback_time


def bring_in_step(mdt: MetadataTable, data_timeline: Timeline, retry: str | None = None) -> Timeline:
    """Roll back the metadata deltacommits no data instant will complete: those of data instants no longer on
    the data timeline, and `retry` (an instant about to be written again). A pending compaction or clean of
    the metadata table (its writer was killed) is undone. Returns the metadata timeline afterwards."""
    timeline = mdt.timeline()
    folded = compacted_before(timeline)
    changed = False
    for inst in timeline.instants:
        if inst.action in ("compaction", "clean") and not inst.is_completed:
            undo_pending(mdt, inst)
            changed = True
        elif inst.action == DELTA and not is_init_instant(inst.requested_time) and not is_folded(inst, folded) and (
                inst.requested_time == retry or data_timeline.find(inst.requested_time) is None):
            roll_back_deltacommit(mdt, timeline, inst)
            timeline = mdt.timeline()
            changed = True
    return mdt.timeline() if changed else timeline


def write_deltacommit(mdt: MetadataTable, mdt_timeline: Timeline, instant: str,
                      records: Mapping[str, dict[str, Any]], record_index: SettledChanges | None = None,
                      column_stats: Mapping[str, dict[str, Any]] | None = None,
                      partition_stats: Mapping[str, dict[str, Any]] | None = None,
                      secondary: Sequence[secondary_index_sync.IndexChanges] = ()) -> None:
    """One deltacommit at `instant`: its log file of `records` (and the record index's logs of
    `record_index`, the `column_stats` and `partition_stats` records' logs and the secondary indexes' logs of
    `secondary`, per file group), then the completed instant."""
    writer = mdt.fmt.timeline_writer(mdt.storage)
    if not writer.create_requested(instant, DELTA):
        raise CommitConflictError(f"the metadata table already has an instant {instant}; retry the write")
    writer.transition_to_inflight(instant, DELTA, mdt.fmt.encode_commit_metadata(
        CommitMetadata(operation_type="UPSERT_PREPPED"), DELTA))
    mdt.ensure_partition(instant)
    name = log_name(instant)
    data = encode_log_block(records, mdt.version, instant)
    mdt.storage.write_bytes(f"{md.FILES}/{name}", data)
    base = compacted_before(mdt_timeline) or min((i.requested_time for i in mdt_timeline.completed()
                                                  if is_init_instant(i.requested_time)), default="")
    stat = WriteStat(file_id=FILES_FILE_ID, path=f"{md.FILES}/{name}", prev_commit=base or "null",
                     num_writes=len(records), num_update_writes=len(records), total_write_bytes=len(data),
                     partition_path=md.FILES, file_size_in_bytes=len(data), is_log=True, log_version=1,
                     base_file="", log_files=[name], total_log_blocks=1, total_log_records=len(records))
    stats = {md.FILES: [stat]}
    index_stats = write_logs(mdt, instant, record_index) if record_index is not None else []
    if index_stats:
        stats[md.RECORD_INDEX] = index_stats
    if column_stats:
        stats[md.COLUMN_STATS] = column_stats_sync.write_logs(mdt, instant, column_stats, base)
    if partition_stats:
        stats[md.PARTITION_STATS] = column_stats_sync.write_logs(mdt, instant, partition_stats, base,
                                                                 md.PARTITION_STATS)
    stats.update(secondary_index_sync.write_logs(mdt, instant, secondary))
    meta = CommitMetadata(partition_to_write_stats=stats, operation_type="UPSERT_PREPPED")
    writer.complete(instant, DELTA, mdt.fmt.encode_commit_metadata(meta, DELTA))


def sync_instant(data_storage: Storage, data_timeline: Timeline, instant: str, changes: Mapping[str, FileChanges],
                 compact_every: int | None = None, record_index: SettledChanges | None = None,
                 secondary: Sequence[secondary_index_sync.IndexChanges] = ()) -> None:
    """Record the data instant `instant` (pending on `data_timeline`) in the metadata table, if the table has
    one (and its key changes `record_index` in the record index, its `secondary` index changes in those
    indexes); with `compact_every`, compact the metadata table first when that many deltacommits await it."""
    mdt = metadata_table_of(data_storage)
    if mdt is None:
        return
    mdt_timeline = bring_in_step(mdt, data_timeline, retry=instant)
    if compact_every is not None:
        if compact_if_due(mdt, mdt_timeline, data_timeline, compact_every):
            mdt_timeline = mdt.timeline()
    column_stats, partition_stats = _index_stats(data_storage, data_timeline, mdt,
                                                 {p: c for p, c in changes.items() if c.added or c.deleted})
    write_deltacommit(mdt, mdt_timeline, instant, change_records(changes), record_index, column_stats,
                      partition_stats, secondary)


def sync_rollback(data_storage: Storage, data_timeline: Timeline, target: str, rollback_time: str,
                  deleted: Mapping[str, Iterable[str]]) -> None:
    """After the data table rolled back `target` at `rollback_time` (deleting `deleted`: partition -> file
    names): roll back its metadata deltacommit, or record the deletions once it is folded into a base file."""
    mdt = metadata_table_of(data_storage)
    if mdt is None:
        return
    timeline = mdt.timeline()
    inst = timeline.find(target)
    if inst is None or inst.action != DELTA:
        return
    if not is_folded(inst, compacted_before(timeline)):
        roll_back_deltacommit(mdt, timeline, inst, rollback_time)
        return
    changes = deleted_changes(deleted)
    config = load_config(data_storage)
    secondary = secondary_index_sync.table_changes(data_storage, config, config.format.load_timeline(data_storage), mdt)
    write_deltacommit(mdt, bring_in_step(mdt, data_timeline), rollback_time, change_records(changes),
                      column_stats=_index_stats(data_storage, data_timeline, mdt, changes)[0], secondary=secondary)


def _index_stats(data_storage: Storage, data_timeline: Timeline, mdt: MetadataTable,
                 changes: Mapping[str, FileChanges]) -> tuple[dict[str, dict[str, Any]] | None,
                                                              dict[str, dict[str, Any]] | None]:
    """The column_stats and partition_stats records of a data instant's changes, each None when the table
    does not keep that partition (partition_stats only beside column_stats, as in Hudi)."""
    if not column_stats_sync.is_maintained(data_storage):
        return None, None
    added = {p: list(c.added) for p, c in changes.items()}
    listed = column_stats_fields(data_storage)  # the columns the table's index definition lists
    reported = {p: c.ranges for p, c in changes.items()}
    by_partition = column_stats_sync.added_file_records(data_storage, mdt.version, added, listed, reported)
    column_stats = column_stats_sync.change_records(data_storage, data_timeline, mdt.version, by_partition,
                                                    {p: c.deleted for p, c in changes.items()}, listed)
    if not partition_stats_sync.is_maintained(data_storage):
        return column_stats, None
    return column_stats, partition_stats_sync.change_records(data_storage, mdt.version, by_partition, added,
                                                             listed, reported)


def archive_limits(data_storage: Storage) -> list[str]:
    """The data instant the data table's archiving must stop before (as a list: empty when none): the earliest
    one whose deltacommit no compaction folded into the metadata table's base file yet. Readers take a
    deltacommit only while its data instant is on the active timeline (HoodieTimelineArchiver keeps them there
    likewise)."""
    mdt = metadata_table_of(data_storage)
    if mdt is None:
        return []
    timeline = mdt.timeline()
    folded = compacted_before(timeline)
    waiting = [i.requested_time for i in timeline.instants if i.action == DELTA
               and not is_init_instant(i.requested_time) and not is_folded(i, folded)]
    return [min(waiting)] if waiting else []
