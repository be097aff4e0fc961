"""Cleaning: delete the file slices Apache Hudi's cleaning policy no longer keeps (CleanPlanner's rules).

KEEP_LATEST_COMMITS (the default) and KEEP_LATEST_BY_HOURS keep a window of commits open to time travel and
incremental reads. It starts at the earliest commit to retain E: the N-th completed commit from the end (never
later than the earliest pending commit or compaction, as Hudi's CleanerUtils decides), or the first completed
commit of the last N hours. Every query on a commit >= E reads, per file group, the slice whose base instant is
the largest one <= that commit. So each file group keeps its latest slice, every slice whose base instant is >= E,
and the newest slice older than E; older slices (base file, log files and change data) are deleted, and so are
file groups replaced (insert overwrite) by a commit older than E. No E yet (too few commits, none in the last N
hours): nothing is deleted.

KEEP_LATEST_FILE_VERSIONS keeps the newest N slices of each file group, whatever their age, and deletes every
replaced file group: no window of commits stays readable, so the clean records no earliest commit to retain.

Whatever the policy, nothing of a pending instant is ever deleted (its marked files), nor the slice a pending
compaction plans to read (which counts as one of the N versions).

A partition left without a live file group (a delete_partition replaced them all before E), with no file of a
pending write and none of a newer replace, is deleted whole once its files go: the plan lists it in
`partitionsToBeDeleted` and the metadata table drops it, as CleanPlanner and CleanActionExecutor do.

The clean is recorded as Hudi does: `<T>.clean.requested` (Avro HoodieCleanerPlan, full paths),
`<T>.clean.inflight` (the same plan), then the files are deleted and `<T>.clean` (HoodieCleanMetadata,
file names) completes it. A clean interrupted before completing is finished by the next `clean()`.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime, timedelta, timezone
from typing import get_args

from hudi_ds.config import TableConfig
from hudi_ds.config.option_field import CleanPolicyName
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.writable import check_writable
from hudi_ds.errors import ConfigError, HudiDsError
from hudi_ds.files.compaction_plan import CompactionOperation, pending_operations
from hudi_ds.files.markers import marked_files
from hudi_ds.files.naming import parse_base_file, parse_cdc_file, parse_log_file
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.metadata.sync import deleted_changes, sync_instant
from hudi_ds.services.target import ServiceTarget
from hudi_ds.storage import Storage, require_inside
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S
from hudi_ds.timeline import Instant, State, Timeline, datetime_to_instant, new_instant_time
from hudi_ds.timeline.avro_models import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    clean_metadata,
    clean_partition_metadata,
    clean_plan,
    encode_avro_instant,
)
from hudi_ds.timeline.instant import PENDING_COMMIT_ACTIONS

__all__ = ["CleanPolicy", "clean", "earliest_commit_to_retain", "plan_clean"]


@dataclass(frozen=True)
class CleanPolicy:
    """One of Apache Hudi's cleaning policies (HoodieCleaningPolicy) and what it retains: `retain` commits,
    file versions or hours, as `name` says."""

    name: CleanPolicyName = "KEEP_LATEST_COMMITS"
    retain: int = 10
    incremental: bool = True  # hoodie.clean.incremental.enabled: no listing when nothing new can go

    def __post_init__(self) -> None:
        if self.name not in get_args(CleanPolicyName):
            raise ConfigError(f"unknown cleaning policy {self.name!r}; use one of "
                              f"{', '.join(get_args(CleanPolicyName))}")
        if isinstance(self.retain, bool) or not isinstance(self.retain, int) or self.retain < 1:
            raise ConfigError(f"{self.name} must retain at least 1, got {self.retain!r}")

    @classmethod
    def of(cls, options: HudiOptions) -> CleanPolicy:
        """The policy the options set (hoodie.clean.policy, or the one whose retained count is set)."""
        name = options.cleaning_policy()
        retain = {"KEEP_LATEST_COMMITS": options.clean_retain_commits,
                  "KEEP_LATEST_FILE_VERSIONS": options.clean_retain_file_versions,
                  "KEEP_LATEST_BY_HOURS": options.clean_retain_hours}[name]
        return cls(name, retain, options.clean_incremental)


def _instant_in(zone: str, moment: datetime) -> str:
    """`moment` (naive: UTC) as an instant time of a timeline kept in `zone` (hoodie.table.timeline.timezone: UTC,
    or LOCAL: this machine's wall clock, as Apache Hudi reads it)."""
    moment = moment if moment.tzinfo is not None else moment.replace(tzinfo=timezone.utc)
    return datetime_to_instant(moment if zone.upper() == "UTC" else moment.astimezone().replace(tzinfo=None))


def earliest_commit_to_retain(timeline: Timeline, policy: CleanPolicy, zone: str = "UTC",
                              now: datetime | None = None) -> Instant | None:
    """The earliest commit whose readers the clean keeps whole (Hudi's CleanerUtils.getEarliestCommitToRetain):
    KEEP_LATEST_COMMITS: the N-th completed commit from the end, moved back before the earliest pending commit
    or compaction if needed (None while fewer than N+1 commits completed); KEEP_LATEST_BY_HOURS: the first
    completed commit at or after N hours before `now`; KEEP_LATEST_FILE_VERSIONS: None."""
    commits = timeline.commits()
    if policy.name == "KEEP_LATEST_BY_HOURS":
        cutoff = _instant_in(zone, (now or datetime.now(timezone.utc)) - timedelta(hours=policy.retain))
        return next((c for c in commits if c.requested_time >= cutoff), None)
    if policy.name != "KEEP_LATEST_COMMITS" or len(commits) <= policy.retain:
        return None
    nth = commits[len(commits) - policy.retain]
    pending = [i for i in timeline.pending() if i.action in PENDING_COMMIT_ACTIONS]
    if pending and nth.requested_time > pending[0].requested_time:
        before = [c for c in commits if c.requested_time < pending[0].requested_time]
        return before[-1] if before else None
    return nth


def _slice_instant(sl: FileSlice) -> str:
    return sl.base_instant or (sl.log_files[0].instant if sl.log_files else "")


def _cleaned_slices(slices: list[FileSlice], op: CompactionOperation | None, policy: CleanPolicy,
                    earliest: str | None) -> list[FileSlice]:
    """The slices of one file group (oldest first) the policy deletes. The slice a pending compaction reads,
    and any newer one, always stay."""
    kept_for_compaction = {id(s) for s in slices if op is not None and _slice_instant(s) >= op.base_instant}
    candidates = [s for s in slices if id(s) not in kept_for_compaction]
    if policy.name == "KEEP_LATEST_FILE_VERSIONS":
        keep = policy.retain - (1 if op is not None else 0)  # the slice under compaction is one of the N
        return candidates[:max(len(candidates) - keep, 0)]
    assert earliest is not None
    older = [s for s in slices if _slice_instant(s) < earliest]
    stays = {id(slices[-1]), id(older[-1]) if older else 0}  # the latest, and the one queries at E read
    return [s for s in candidates if _slice_instant(s) < earliest and id(s) not in stays]


def _replaced_groups(timeline: Timeline, before: str | None) -> set[tuple[str, str]]:
    """File groups replaced by a completed replacecommit older than `before` (None: any)."""
    out: set[tuple[str, str]] = set()
    for inst in timeline.commits():
        if inst.action == "replacecommit" and (before is None or inst.requested_time < before):
            for partition, ids in timeline.commit_metadata(inst).replaced_file_ids().items():
                out.update((partition, fid) for fid in ids)
    return out


def plan_clean(storage: Storage, timeline: Timeline, view: FileSystemView, policy: CleanPolicy,
               earliest: str | None) -> dict[str, list[str]]:
    """Partition -> relative paths of the files the policy deletes, given the earliest commit to retain (None
    under KEEP_LATEST_FILE_VERSIONS)."""
    protected: set[str] = set()
    for inst in timeline.pending():
        protected.update(marked_files(storage, inst.requested_time))
    compacting = pending_operations(timeline)
    out: dict[str, list[str]] = defaultdict(list)
    for key, slices in view.groups.items():
        for sl in _cleaned_slices(slices, compacting.get(key), policy, earliest):
            out[sl.partition].extend(f for f in sl.files + [c.path for c in sl.cdc_files] if f not in protected)
    replaced = _replaced_groups(timeline, earliest) - set(compacting)
    if replaced:
        for entry in storage.walk_files(""):
            if entry.path.startswith(".hoodie/") or entry.path in protected:
                continue
            partition, _, name = entry.path.rpartition("/")
            ref = parse_base_file(partition, name) or parse_log_file(partition, name) or parse_cdc_file(partition, name)
            if ref is not None and (partition, ref.file_id) in replaced:
                out[partition].append(entry.path)
    return {p: sorted(files) for p, files in sorted(out.items()) if files}


def emptied_partitions(storage: Storage, timeline: Timeline, view: FileSystemView, files: dict[str, list[str]],
                       earliest: str | None) -> list[str]:
    """The partitions a clean deleting `files` (plan_clean's) leaves empty: every data file in them is of a file
    group replaced before `earliest` and is in `files`, and none of their groups is live (CleanPlanner's
    toDeletePartition). The table's root (a non-partitioned table) never."""
    live = {partition for partition, _ in view.groups}
    out = []
    for partition in sorted({p for p, _ in _replaced_groups(timeline, earliest)} - live):
        if not partition or partition not in files:
            continue
        planned = set(files[partition])
        names = [e.name for e in storage.list(partition) if not e.is_dir]
        data = [n for n in names if parse_base_file(partition, n) or parse_log_file(partition, n)
                or parse_cdc_file(partition, n)]
        if all(f"{partition}/{n}" in planned for n in data) and not any(e.is_dir for e in storage.list(partition)):
            out.append(partition)
    return out


def _execute(storage: Storage, timeline: Timeline, instant: str, plan: dict, started: float) -> None:
    """Delete the planned files and publish the completed clean instant. Every planned path is checked to lie
    inside the table before the first delete."""
    source = f"the clean plan of instant {instant} (.hoodie/{instant}.clean.requested)"
    planned = {partition: [require_inside(_relative(storage, info.get("filePath") or ""), source)
                           for info in infos or []]
               for partition, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items()}
    emptied = {require_inside(p, source) for p in plan.get("partitionsToBeDeleted") or [] if p}
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
        deleted = partition in emptied and not failed
        if deleted:
            storage.delete_dir(partition)
        parts[partition] = clean_partition_metadata(partition, plan.get("policy") or "KEEP_LATEST_COMMITS", names,
                                                    ok, failed, is_partition_deleted=deleted)
    earliest = (plan.get("earliestInstantToRetain") or {}).get("timestamp") or ""
    meta = clean_metadata(instant, earliest, parts, plan.get("lastCompletedCommitTimestamp") or "",
                          int((time.time() - started) * 1000))
    sync_instant(storage, timeline, instant, deleted_changes({p: m["successDeleteFiles"] for p, m in parts.items()},
                                                             [p for p, m in parts.items() if m["isPartitionDeleted"]]))
    timeline.writer().complete(instant, "clean", encode_avro_instant(meta, CLEAN_METADATA))


def _relative(storage: Storage, path: str) -> str:
    """A plan's full path back to a path relative to the table (plans also hold `file:` URIs)."""
    base = storage.full("") + "/"
    for prefix in ("file://", "file:"):
        if path.startswith(prefix) and not path.startswith(base):
            path = path[len(prefix):]
    return path[len(base):] if path.startswith(base) else path


def _nothing_new_to_clean(timeline: Timeline, earliest: str) -> bool:
    """Whether a clean at the earliest commit to retain `earliest` would delete nothing, known without listing
    the table (Apache Hudi's incremental cleaning, narrowed): the last clean, at E0 (none: the timeline's start,
    while nothing was archived), deleted every file it planned, and each commit from E0 up to `earliest` wrote
    log files and new file groups only. A slice becomes deletable when E passes the base instant of a newer
    slice of its file group (a compaction, a base file rewritten) or a replacecommit; any commit of those kinds
    in the window, or a last clean that left files behind, lets the full clean run. A stream of micro-batches
    into a merge-on-read bucket table then lists the table about once per compaction."""
    cleans = [i for i in timeline.completed() if i.action == "clean"]
    since = ""
    if cleans:
        try:
            last = timeline.read_avro(cleans[-1])
        except HudiDsError:
            return False
        since = last.get("earliestCommitToRetain") or ""
        if not since or any(m.get("failedDeleteFiles") for m in (last.get("partitionMetadata") or {}).values()):
            return False
    known_groups = not timeline.has_archived_instants()  # else a group may have been created by an archived commit
    if not cleans and not known_groups:
        return False
    seen: set[tuple[str, str]] = set()
    for inst in sorted(timeline.commits(), key=lambda i: i.requested_time):
        window = since <= inst.requested_time < earliest
        if window and inst.action not in ("deltacommit", "commit"):
            return False
        for stat in timeline.commit_metadata(inst).write_stats():
            group = (stat.partition_path or "", stat.file_id)
            base_file = any(parse_log_file("", p.rsplit("/", 1)[-1]) is None for p in stat.all_paths())
            if window and base_file and (group in seen or not known_groups):
                return False
            seen.add(group)
    return True


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
        _execute(storage, timeline, inst.requested_time, plan, started)
        last = inst.requested_time
    return last


def clean(table: ServiceTarget, policy: CleanPolicy | None = None, *, retain_commits: int | None = None,
          sweep_staged: bool = True, now: datetime | None = None) -> str | None:
    """Delete the file slices `policy` no longer keeps (default KEEP_LATEST_COMMITS, 10 commits;
    `retain_commits` alone: KEEP_LATEST_COMMITS with that many); returns the clean instant, or None if there was
    nothing to delete. `now` (aware) is the clock KEEP_LATEST_BY_HOURS counts back from.

    Staged copies killed writers left (a minute old) go too: in every folder with `sweep_staged`, else only
    while the active timeline records a rollback (killed writers' instants are rolled back), which spares the
    clean after every commit a walk of the whole table."""
    if retain_commits is not None:
        if policy is not None:
            raise ConfigError("give either a cleaning policy or retain_commits, not both")
        policy = CleanPolicy("KEEP_LATEST_COMMITS", retain_commits)
    storage, config = table.storage, table.config
    check_writable(config)
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):  # one cleaner at a time, among all writers
        return _clean(storage, config, policy or CleanPolicy(), sweep_staged, now)


def _clean(storage: Storage, config: TableConfig, policy: CleanPolicy, sweep_staged: bool,
           now: datetime | None) -> str | None:
    started = time.time()
    timeline = config.format.load_timeline(storage)
    finished = _finish_pending(storage, timeline)
    if finished is not None:
        timeline = config.format.load_timeline(storage)
    if sweep_staged or any(i.action == "rollback" for i in timeline.completed()):
        storage.discard_staged()  # copies killed writers staged (a rollback removes only a minute-old one)
    earliest = earliest_commit_to_retain(timeline, policy, config.timezone, now)
    if earliest is None and policy.name != "KEEP_LATEST_FILE_VERSIONS":
        return finished
    if earliest is not None and policy.incremental and _nothing_new_to_clean(timeline, earliest.requested_time):
        return finished
    view = FileSystemView(storage, config, timeline, Visibility.of(timeline, None, timeline.layout))
    files = plan_clean(storage, timeline, view, policy, earliest.requested_time if earliest else None)
    if not files:
        return finished
    last_commit = timeline.last_completed_commit()
    plan = clean_plan(
        policy.name, {p: [storage.full(f) for f in fs] for p, fs in files.items()},
        (earliest.requested_time, earliest.action, "COMPLETED") if earliest else None,
        last_commit.requested_time if last_commit else "",
        emptied_partitions(storage, timeline, view, files, earliest.requested_time if earliest else None),
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
    _execute(storage, timeline, instant, plan, started)
    return instant
