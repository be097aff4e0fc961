"""Cleaning (Hudi's KEEP_LATEST_COMMITS policy): delete the file slices no retained query can need.

The retained window starts at the earliest commit to retain E: the N-th completed commit from the end
(never later than the earliest pending commit or compaction, as Hudi's CleanerUtils decides). Every query
on a commit >= E reads, per file group, the slice whose base instant is the largest one <= that commit.
So each file group keeps its latest slice, every slice whose base instant is >= E, and the newest slice
older than E; older slices (base file and log files) are deleted. File groups replaced (insert overwrite)
by a commit older than E are deleted whole. Nothing of a pending instant is ever deleted (its marked
files, the slice a pending compaction plans to read).

The clean is recorded as Hudi does: `<T>.clean.requested` (Avro HoodieCleanerPlan, full paths),
`<T>.clean.inflight` (the same plan), then the files are deleted and `<T>.clean` (HoodieCleanMetadata,
file names) completes it. A clean interrupted before completing is finished by the next `clean()`.
"""

from __future__ import annotations

import time
from collections import defaultdict

from hudi_ds.config import TableConfig
from hudi_ds.config.writable import check_writable
from hudi_ds.errors import ConfigError
from hudi_ds.files.compaction_plan import pending_operations
from hudi_ds.files.markers import marked_files
from hudi_ds.files.naming import parse_base_file, parse_cdc_file, parse_log_file
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.services.target import ServiceTarget
from hudi_ds.storage import Storage, require_inside
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S
from hudi_ds.timeline import Instant, State, Timeline, TimelineWriter, new_instant_time
from hudi_ds.timeline.avro_models import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    clean_metadata,
    clean_partition_metadata,
    clean_plan,
    encode_avro_instant,
)
from hudi_ds.timeline.instant import PENDING_COMMIT_ACTIONS

__all__ = ["POLICY", "clean", "earliest_commit_to_retain", "plan_clean"]

POLICY = "KEEP_LATEST_COMMITS"


def earliest_commit_to_retain(timeline: Timeline, retain_commits: int) -> Instant | None:
    """The N-th completed commit from the end, moved back before the earliest pending commit or
    compaction if needed (Hudi's CleanerUtils.getEarliestCommitToRetain); None while fewer than N+1
    commits completed."""
    commits = timeline.commits()
    if len(commits) <= retain_commits:
        return None
    nth = commits[len(commits) - retain_commits]
    pending = [i for i in timeline.pending() if i.action in PENDING_COMMIT_ACTIONS]
    if pending and nth.requested_time > pending[0].requested_time:
        before = [c for c in commits if c.requested_time < pending[0].requested_time]
        return before[-1] if before else None
    return nth


def _slice_instant(sl: FileSlice) -> str:
    return sl.base_instant or (sl.log_files[0].instant if sl.log_files else "")


def _replaced_groups_before(timeline: Timeline, earliest: str) -> set[tuple[str, str]]:
    """File groups replaced by a completed replacecommit older than the earliest commit to retain."""
    out: set[tuple[str, str]] = set()
    for inst in timeline.commits():
        if inst.action == "replacecommit" and inst.requested_time < earliest:
            for partition, ids in timeline.commit_metadata(inst).replaced_file_ids().items():
                out.update((partition, fid) for fid in ids)
    return out


def plan_clean(storage: Storage, timeline: Timeline, view: FileSystemView,
               earliest: str) -> dict[str, list[str]]:
    """Partition -> relative paths of the files KEEP_LATEST_COMMITS deletes, given the earliest commit
    to retain."""
    protected: set[str] = set()
    for inst in timeline.pending():
        protected.update(marked_files(storage, inst.requested_time))
    compacting = pending_operations(timeline)
    out: dict[str, list[str]] = defaultdict(list)
    for key, slices in view.groups.items():
        op = compacting.get(key)
        before = [s for s in slices if _slice_instant(s) < earliest]
        for sl in slices[:-1]:  # the latest slice always stays
            if _slice_instant(sl) >= earliest or sl is before[-1]:
                continue  # read by queries on retained commits (the newest slice before E: queries at E)
            if op is not None and _slice_instant(sl) >= op.base_instant:
                continue  # the slice a pending compaction will read
            out[sl.partition].extend(f for f in sl.files + [c.path for c in sl.cdc_files] if f not in protected)
    replaced = _replaced_groups_before(timeline, earliest) - set(compacting)
    if replaced:
        for entry in storage.walk_files(""):
            if entry.path.startswith(".hoodie/") or entry.path in protected:
                continue
            partition, _, name = entry.path.rpartition("/")
            ref = parse_base_file(partition, name) or parse_log_file(partition, name) or parse_cdc_file(partition, name)
            if ref is not None and (partition, ref.file_id) in replaced:
                out[partition].append(entry.path)
    return {p: sorted(files) for p, files in sorted(out.items()) if files}


def _execute(storage: Storage, writer: TimelineWriter, instant: str, plan: dict, started: float) -> None:
    """Delete the planned files and publish the completed clean instant. Every planned path is checked to lie
    inside the table before the first delete."""
    source = f"the clean plan of instant {instant} (.hoodie/{instant}.clean.requested)"
    planned = {partition: [require_inside(_relative(storage, info.get("filePath") or ""), source)
                           for info in infos or []]
               for partition, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items()}
    parts = {}
    for partition, rels in planned.items():
        names: list[str] = []
        ok: list[str] = []
        failed: list[str] = []
        for rel in rels:
            name = rel.rsplit("/", 1)[-1]
            names.append(name)
            try:
                storage.delete(rel)
            except OSError:
                pass
            (failed if storage.exists(rel) else ok).append(name)
        parts[partition] = clean_partition_metadata(partition, POLICY, names, ok, failed)
    earliest = (plan.get("earliestInstantToRetain") or {}).get("timestamp") or ""
    meta = clean_metadata(instant, earliest, parts, plan.get("lastCompletedCommitTimestamp") or "",
                          int((time.time() - started) * 1000))
    writer.complete(instant, "clean", encode_avro_instant(meta, CLEAN_METADATA))


def _relative(storage: Storage, path: str) -> str:
    """A plan's full path back to a path relative to the table (plans also hold `file:` URIs)."""
    base = storage.full("") + "/"
    for prefix in ("file://", "file:"):
        if path.startswith(prefix) and not path.startswith(base):
            path = path[len(prefix):]
    return path[len(base):] if path.startswith(base) else path


def _finish_pending(storage: Storage, timeline: Timeline) -> str | None:
    """Complete a clean a previous call planned but did not finish (its plan is the requested file)."""
    last = None
    for inst in timeline.pending():
        if inst.action != "clean":
            continue
        started = time.time()
        plan = timeline.read_avro(inst, State.REQUESTED)
        if inst.state is State.REQUESTED:
            timeline.writer().transition_to_inflight(
                inst.requested_time, "clean", encode_avro_instant(plan, CLEANER_PLAN))
        _execute(storage, timeline.writer(), inst.requested_time, plan, started)
        last = inst.requested_time
    return last


def clean(table: ServiceTarget, *, retain_commits: int = 10, sweep_staged: bool = True) -> str | None:
    """Delete the file slices that no query on the last `retain_commits` completed commits needs;
    returns the clean instant, or None if there was nothing to delete.

    Staged copies killed writers left (a minute old) go too: in every folder with `sweep_staged`, else only
    while the active timeline records a rollback (killed writers' instants are rolled back), which spares the
    clean after every commit a walk of the whole table."""
    if retain_commits < 1:
        raise ConfigError(f"retain_commits must be at least 1, got {retain_commits!r}")
    storage, config = table.storage, table.config
    check_writable(config)
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):  # one cleaner at a time, among all writers
        return _clean(storage, config, retain_commits, sweep_staged)


def _clean(storage: Storage, config: TableConfig, retain_commits: int, sweep_staged: bool) -> str | None:
    started = time.time()
    timeline = config.format.load_timeline(storage)
    finished = _finish_pending(storage, timeline)
    if finished is not None:
        timeline = config.format.load_timeline(storage)
    if sweep_staged or any(i.action == "rollback" for i in timeline.completed()):
        storage.discard_staged()  # copies killed writers staged (a rollback removes only a minute-old one)
    earliest = earliest_commit_to_retain(timeline, retain_commits)
    if earliest is None:
        return finished
    view = FileSystemView(storage, config, timeline, Visibility.of(timeline, None, timeline.layout))
    files = plan_clean(storage, timeline, view, earliest.requested_time)
    if not files:
        return finished
    last_commit = timeline.last_completed_commit()
    plan = clean_plan(
        POLICY, {p: [storage.full(f) for f in fs] for p, fs in files.items()},
        (earliest.requested_time, earliest.action, "COMPLETED"),
        last_commit.requested_time if last_commit else "",
    )
    content = encode_avro_instant(plan, CLEANER_PLAN)
    writer = timeline.writer()
    last = timeline.last_instant_time()
    while True:
        instant = new_instant_time(after=last)
        if writer.create_requested(instant, "clean", content):
            break
        last = instant
    writer.transition_to_inflight(instant, "clean", content)
    _execute(storage, writer, instant, plan, started)
    return instant
