"""The metadata table's own table services: compaction of the files partition into an HFile base file, and the
clean that follows it, so the metadata table does not grow with every commit.

As in Hudi (HoodieBackedTableMetadataWriter.compactIfNecessary, hoodie.metadata.compact.max.delta.commits), a
compaction is due once that many deltacommits completed since the last base file; it is scheduled only when
each of them belongs to a completed data instant (a pending one may still be rolled back, which deletes its log
file: a base file cannot forget it) and the metadata table has no pending instant. Data writes check for it (the
table services' metadata updates do not), before their own deltacommit, so that one lands in the new slice (slicing by completion time). The clean then
keeps the new slice and the one before it (readers that loaded the timeline a moment ago read that one) and
deletes older base and log files, recorded as a clean instant of the metadata table; the instants of the deleted
slices then move into the metadata table's archived timeline (LSM history), as Hudi archives it.
"""

from __future__ import annotations

from hudi_ds.files.naming import parse_base_file, parse_log_file
from hudi_ds.metadata import column_stats_sync, secondary_index_sync
from hudi_ds.metadata import record_index_sync as record_index
from hudi_ds.metadata import records as md
from hudi_ds.metadata.column_stats import file_group_slices
from hudi_ds.metadata.hfiles import encode_base_file
from hudi_ds.metadata.layout import FILES_FILE_ID, MetadataTable, base_name, is_init_instant
from hudi_ds.metadata.listing import files_slice, merged_records
from hudi_ds.timeline import Instant, State, Timeline, new_instant_time
from hudi_ds.timeline.avro_models import (
    COMPACTION_PLAN,
    clean_metadata,
    clean_partition_metadata,
    clean_plan,
    compaction_operation,
    compaction_plan,
    encode_avro_instant,
)
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_ds.timeline.instant import parse_instant_file_name
from hudi_ds.timeline.lsm_history import append_history, history_row

CLEAN_POLICY = "KEEP_LATEST_FILE_VERSIONS"
KEPT_SLICES = 2


def undo_pending(mdt: MetadataTable, inst: Instant) -> None:
    """Drop a compaction or clean of the metadata table its writer did not finish (a base file it may have
    written included; files a clean did not delete yet are deleted by the next clean)."""
    if inst.action == "compaction":
        mdt.storage.delete(f"{md.FILES}/{base_name(inst.requested_time)}")
        record_index.undo_compaction(mdt, inst.requested_time)
        secondary_index_sync.undo_compaction(mdt, inst.requested_time)
        for partition in (md.COLUMN_STATS, md.PARTITION_STATS):
            for rel in column_stats_sync.written_by(mdt, inst.requested_time, partition):
                mdt.storage.delete(rel)
    mdt.fmt.timeline_writer(mdt.storage).delete_instant_files(inst.requested_time, inst.action)


def compact_if_due(mdt: MetadataTable, mdt_timeline: Timeline, data_timeline: Timeline, every: int) -> str | None:
    """Compact the files partition when `every` deltacommits await it; returns the compaction instant."""
    if mdt_timeline.pending():
        return None
    sl = files_slice(mdt, mdt_timeline, None)
    if len(sl.logs) < every or any(not is_init_instant(i) and not data_timeline.contains_completed(i)
                                   for _, i in sl.logs):
        return None
    last = max(filter(None, (mdt_timeline.last_instant_time(), data_timeline.last_instant_time())))
    instant = new_instant_time(after=last)
    writer = mdt.fmt.timeline_writer(mdt.storage)
    op = compaction_operation(sl.base_instant, FILES_FILE_ID, md.FILES,
                              sl.base.rsplit("/", 1)[-1] if sl.base else None,
                              [rel.rsplit("/", 1)[-1] for rel, _ in sl.logs])
    index_slices = record_index.compaction_slices(mdt, mdt_timeline)
    ops = [op, *(compaction_operation(s.base_instant, record_index.file_group_id(i), md.RECORD_INDEX,
                                      s.base.rsplit("/", 1)[-1] if s.base else None,
                                      [rel.rsplit("/", 1)[-1] for rel, _ in s.logs]) for i, s in index_slices)]
    secondary_slices = secondary_index_sync.compaction_slices(mdt, mdt_timeline)
    ops += [compaction_operation(s.base_instant, index.file_group_id(n), index.partition,
                                 s.base.rsplit("/", 1)[-1] if s.base else None,
                                 [rel.rsplit("/", 1)[-1] for rel, _ in s.logs]) for index, n, s in secondary_slices]
    stats_slices = {p: file_group_slices(mdt, p, mdt_timeline, data_timeline)
                    for p in (md.COLUMN_STATS, md.PARTITION_STATS) if mdt.storage.exists(p)}
    for partition, slices in stats_slices.items():
        ops += column_stats_sync.compaction_operations(slices, partition)
    if not writer.create_requested(instant, "compaction", encode_avro_instant(compaction_plan(ops), COMPACTION_PLAN)):
        return None
    writer.transition_to_inflight(instant, "compaction")
    records = merged_records(mdt, sl)
    name = base_name(instant)
    data = encode_base_file(records, mdt.version)
    mdt.storage.write_bytes(f"{md.FILES}/{name}", data)
    stat = WriteStat(file_id=FILES_FILE_ID, path=f"{md.FILES}/{name}", prev_commit=sl.base_instant or "null",
                     num_writes=len(records), total_write_bytes=len(data), partition_path=md.FILES,
                     file_size_in_bytes=len(data), total_log_files_compacted=len(sl.logs))
    stats = {md.FILES: [stat]}
    if index_slices:
        stats[md.RECORD_INDEX] = record_index.compact(mdt, index_slices, instant)
    for partition, slices in stats_slices.items():
        if slices:
            stats[partition] = column_stats_sync.compact(mdt, slices, instant, partition)
    stats.update(secondary_index_sync.compact(mdt, secondary_slices, instant))
    meta = CommitMetadata(partition_to_write_stats=stats, compacted=True, operation_type="COMPACT")
    writer.complete(instant, "compaction", mdt.fmt.encode_commit_metadata(meta, "commit"))
    clean(mdt, mdt.timeline())
    return instant


def clean(mdt: MetadataTable, mdt_timeline: Timeline) -> str | None:
    """Delete the file slices older than the latest `KEPT_SLICES`; returns the clean instant, None when there
    was nothing to delete."""
    completion = {i.requested_time: i.completion_time or "" for i in mdt_timeline.completed()}
    entries = [e for e in mdt.storage.list(md.FILES) if not e.is_dir]
    bases = sorted({b.instant for e in entries if (b := parse_base_file(md.FILES, e.name)) is not None
                    and b.instant in completion})
    if len(bases) <= KEPT_SLICES:
        return None
    oldest_kept = bases[-KEPT_SLICES]
    # the index partitions' file groups are compacted with the files partition: the same slices go
    partitions = [md.FILES, *(p for p in (md.COLUMN_STATS, md.PARTITION_STATS, md.RECORD_INDEX)
                              if mdt.storage.exists(p)), *secondary_index_sync.partitions(mdt)]
    doomed: dict[str, list[str]] = {}
    for partition in partitions:
        listed = entries if partition == md.FILES else [e for e in mdt.storage.list(partition) if not e.is_dir]
        for e in listed:
            base, log = parse_base_file(partition, e.name), parse_log_file(partition, e.name)
            if (base is not None and base.instant < oldest_kept) or (
                    log is not None and log.instant in completion and completion[log.instant] < oldest_kept):
                doomed.setdefault(partition, []).append(e.path)
    if not doomed:
        return None
    instant = new_instant_time(after=mdt_timeline.last_instant_time())
    plan = clean_plan(CLEAN_POLICY, {p: [mdt.storage.full(rel) for rel in rels] for p, rels in doomed.items()},
                      None, oldest_kept)
    for rels in doomed.values():
        for rel in rels:
            mdt.storage.delete(rel)
    names = {p: [rel.rsplit("/", 1)[-1] for rel in rels] for p, rels in doomed.items()}
    meta = clean_metadata(instant, "", {p: clean_partition_metadata(p, CLEAN_POLICY, n, n) for p, n in names.items()},
                          oldest_kept)
    mdt.fmt.timeline_writer(mdt.storage).write_avro_completed(instant, "clean", plan, meta)
    archive(mdt, mdt.timeline(), oldest_kept)
    return instant


def archive(mdt: MetadataTable, mdt_timeline: Timeline, oldest_kept: str) -> list[str]:
    """Move the instants of the cleaned slices into the metadata table's LSM history (its archived timeline),
    so its active timeline stays a couple of compactions long. The boundary is the base instant of the oldest
    kept slice, moved back before any delta commit that completed after it (a delta commit is requested at its
    data instant's time, which may be much older) and before any pending instant: a prefix of the timeline,
    without holes. Returns the archived instant times."""
    later = [i.requested_time for i in mdt_timeline.instants
             if not i.is_completed or (i.action == "deltacommit" and (i.completion_time or "") >= oldest_kept)]
    boundary = min([oldest_kept, *later])
    folder = mdt.fmt.timeline_dir
    files = [(inst, e.name) for e in mdt.storage.list(folder)
             if not e.is_dir and (inst := parse_instant_file_name(e.name, mdt.fmt.layout)) is not None
             and inst.requested_time < boundary]
    if not files:
        return []
    names = {(inst.requested_time, inst.state): name for inst, name in files}
    rows = []
    for inst, name in files:
        if inst.is_completed and inst.completion_time is not None:
            requested = names.get((inst.requested_time, State.REQUESTED))
            plan = mdt.storage.read_bytes(f"{folder}/{requested}") if requested else b""
            rows.append(history_row(inst.requested_time, inst.completion_time, inst.action,
                                    mdt.storage.read_bytes(f"{folder}/{name}"), plan or None))
    append_history(mdt.storage, mdt.fmt.archive_dir, rows)
    for _, name in sorted(files, key=lambda f: f[0].is_completed):  # pending states first: no hole
        mdt.storage.delete(f"{folder}/{name}")
    return sorted({inst.requested_time for inst, _ in files})
