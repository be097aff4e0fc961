"""Rollback: remove exactly what an instant wrote, then record a rollback instant on the timeline.

Files of a pending instant are found through its markers (files/markers.py, written before each data
file); files of a completed instant through its commit metadata. A log
file that also holds blocks of other instants (Java appends to logs on some file systems) is not
deleted: a rollback command block masks the instant instead.
"""

from __future__ import annotations

import time
from collections.abc import Iterable

from hudi_ds.config import TableConfig
from hudi_ds.errors import InstantNotFoundError, InstantStateError
from hudi_ds.files.markers import marked_files
from hudi_ds.files.naming import join, log_file_name, parse_base_file, parse_cdc_file, parse_log_file
from hudi_ds.log.blocks import encode_rollback_block
from hudi_ds.log.format import read_blocks
from hudi_ds.metadata.sync import sync_rollback
from hudi_ds.recovery.heartbeat import DEFAULT_HEARTBEAT_TIMEOUT_S, heartbeat_age, stop_heartbeat
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S, temp_dir
from hudi_ds.table_format import TableFormat
from hudi_ds.timeline import COMMIT_ACTIONS, Instant, State, Timeline, new_instant_time
from hudi_ds.timeline.avro_models import (
    rollback_metadata,
    rollback_partition_metadata,
    rollback_plan,
    rollback_request,
)


def ownership(storage: Storage, rel: str, instant: str) -> str:
    """Whose a marked data file is: "own" (only `instant` wrote it), "shared" (a log holding blocks of other
    instants too), "foreign" (another writer's: a marker of a name this instant tried and lost), "gone".
    A base file's name carries its instant; a log file's blocks carry theirs in their headers."""
    partition, _, name = rel.rpartition("/")
    log = parse_log_file(partition, name) or parse_cdc_file(partition, name)
    if log is None:
        base = parse_base_file(partition, name)
        if base is not None and base.instant != instant:
            return "foreign"
        return "own" if storage.exists(rel) else "gone"
    try:
        instants = {b.instant_time for b in read_blocks(storage.read_bytes(rel), rel)} - {None}
    except FileNotFoundError:
        return "gone"
    if instant not in instants:
        return "foreign" if instants else "own"
    return "shared" if len(instants) > 1 else "own"


def _remove_files(storage: Storage, instant: str, files: Iterable[str]) -> dict[str, dict[str, list[str]]]:
    """Delete (or mask) each file this instant wrote; returns per-partition lists of deleted and masked files."""
    result: dict[str, dict[str, list[str]]] = {}
    files = list(files)
    storage.discard_staged(files)
    for rel in files:
        partition, _, name = rel.rpartition("/")
        entry = result.setdefault(partition, {"deleted": [], "masked": []})
        owner = ownership(storage, rel, instant)
        if owner == "shared":
            log = parse_log_file(partition, name)
            assert log is not None
            _append_rollback_block(storage, partition, log.file_id, log.instant, instant)
            entry["masked"].append(rel)
        elif owner == "own":
            storage.delete(rel)
            entry["deleted"].append(rel)
    return result


def _append_rollback_block(storage: Storage, partition: str, file_id: str, base_instant: str, target: str) -> None:
    versions = [
        lf.version for e in storage.list(partition)
        if (lf := parse_log_file(partition, e.name)) is not None and lf.file_id == file_id and lf.instant == base_instant
    ]
    rollback_time = new_instant_time()
    name = log_file_name(file_id, base_instant, max(versions, default=0) + 1, "1-0-1")
    storage.write_bytes(join(partition, name), encode_rollback_block(rollback_time, target))


def record_rollback(storage: Storage, timeline: Timeline, target: Instant, removed: dict[str, dict[str, list[str]]],
            started: float) -> str:
    rollback_time = new_instant_time(after=timeline.last_instant_time())
    plan = rollback_plan(
        target.requested_time, target.action,
        [rollback_request(p, files_to_be_deleted=[storage.full(f) for f in v["deleted"]]) for p, v in removed.items()],
    )
    parts = {p: rollback_partition_metadata(p, [storage.full(f) for f in v["deleted"]]) for p, v in removed.items()}
    meta = rollback_metadata(rollback_time, [(target.requested_time, target.action)], parts,
                             int((time.time() - started) * 1000))
    timeline.writer().write_avro_completed(rollback_time, "rollback", plan, meta)
    sync_rollback(storage, timeline, target.requested_time, rollback_time,
                  {p: [f.rsplit("/", 1)[-1] for f in v["deleted"]] for p, v in removed.items()})
    return rollback_time


def rollback_pending(storage: Storage, config: TableConfig, instant_time: str) -> str | None:
    """Roll back a pending (failed or aborted) instant; returns the rollback instant, None if nothing was pending.
    Holds the commit lock: the instant cannot complete while its files are being removed."""
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        return _rollback_pending(storage, config.format, instant_time)


def _rollback_pending(storage: Storage, fmt: TableFormat, instant_time: str) -> str | None:
    started = time.time()
    timeline = fmt.load_timeline(storage)
    target = timeline.find(instant_time)
    if target is None:
        storage.delete_dir(temp_dir(instant_time))
        return None
    if target.is_completed:
        raise InstantStateError(f"instant {instant_time} is completed; use HudiTable.rollback() to undo a completed commit")
    removed = _remove_files(storage, instant_time, marked_files(storage, instant_time))
    timeline.writer().delete_instant_files(instant_time, target.action)
    storage.delete_dir(temp_dir(instant_time))
    stop_heartbeat(storage, instant_time)
    return record_rollback(storage, timeline, target, removed, started)


def rollback_completed(storage: Storage, config: TableConfig, instant_time: str) -> str:
    """Undo the latest completed commit (or a pending instant): its files are removed and its instant files
    deleted, under the commit lock (no commit completes meanwhile)."""
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        return _rollback_completed(storage, config.format, instant_time)


def _rollback_completed(storage: Storage, fmt: TableFormat, instant_time: str) -> str:
    started = time.time()
    timeline = fmt.load_timeline(storage)
    target = timeline.find(instant_time)
    if target is None:
        raise InstantNotFoundError(f"instant {instant_time} is not on the timeline; see HudiTable.timeline()")
    if not target.is_completed:
        return _rollback_pending(storage, fmt, instant_time) or instant_time
    if target.action not in COMMIT_ACTIONS:  # a clean's files are gone; a rollback, indexing or savepoint is no write
        raise InstantStateError(
            f"instant {instant_time} is a completed {target.action}, not a commit: only a commit, deltacommit or "
            "replacecommit can be rolled back (Apache Hudi's rollback takes the same); see HudiTable.timeline()")
    later = [c for c in timeline.commits() if timeline.ordering_key(c) > timeline.ordering_key(target)]
    if later:
        raise InstantStateError(
            f"instant {instant_time} is not the latest commit ({later[-1].requested_time} came after it); roll back "
            "the later commits first, newest first"
        )
    files = set(marked_files(storage, instant_time))
    for stat in timeline.commit_metadata(target).write_stats():
        files.update(stat.all_paths() + stat.cdc_paths())
    removed = _remove_files(storage, instant_time, sorted(files))
    timeline.writer().delete_instant_files(instant_time, target.action)
    storage.delete_dir(temp_dir(instant_time))
    return record_rollback(storage, timeline, target, removed, started)


def revert_compaction_attempt(storage: Storage, timeline: Timeline, inst: Instant) -> None:
    """Undo a failed execution of a compaction plan: delete its files (found by markers), record a rollback
    instant as Hudi does, and turn the instant back into a requested plan (the plan itself stays)."""
    started = time.time()
    removed: dict[str, dict[str, list[str]]] = {}
    marked = marked_files(storage, inst.requested_time)
    storage.discard_staged(marked)
    for rel in marked:
        entry = removed.setdefault(rel.rpartition("/")[0], {"deleted": [], "masked": []})
        if storage.exists(rel):
            storage.delete(rel)
            entry["deleted"].append(rel)
    if removed:
        record_rollback(storage, timeline, inst, removed, started)
    storage.delete(timeline.file_path(inst, State.INFLIGHT))
    storage.delete_dir(temp_dir(inst.requested_time))


def _revert_dead_compaction(storage: Storage, fmt: TableFormat, instant_time: str, timeout_s: float) -> bool:
    """Under the commit lock (an executor claims a plan under it): revert the attempt if it is still inflight
    and its executor still looks dead."""
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        timeline = fmt.load_timeline(storage)
        inst = timeline.find(instant_time)
        age = heartbeat_age(storage, instant_time)
        if inst is None or inst.state is not State.INFLIGHT or (age is not None and age < timeout_s):
            return False
        revert_compaction_attempt(storage, timeline, inst)
        return True


def rollback_failed_writes(storage: Storage, config: TableConfig, timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S,
                           only: Iterable[str] | None = None) -> list[str]:
    """Roll back pending writes whose writer stopped heart-beating (crashed), and revert compaction attempts
    whose executor did: their files must be gone before any later commit completes, or hudi-rs (which does
    not check the timeline on v6) would read them."""
    timeline = config.format.load_timeline(storage)
    wanted = set(only) if only is not None else None
    rolled = []
    for inst in timeline.pending():
        compaction = inst.action == "compaction" and inst.state is State.INFLIGHT
        if inst.action not in COMMIT_ACTIONS and not compaction:
            continue
        if wanted is not None and inst.requested_time not in wanted:
            continue
        age = heartbeat_age(storage, inst.requested_time)
        if wanted is None and age is not None and age < timeout_s:
            continue  # a live writer
        if compaction:
            if _revert_dead_compaction(storage, config.format, inst.requested_time,
                                       timeout_s if wanted is None else float("inf")):
                rolled.append(inst.requested_time)
            continue
        try:
            rollback_pending(storage, config, inst.requested_time)
        except InstantStateError:
            continue  # its writer was alive after all, and completed it meanwhile
        rolled.append(inst.requested_time)
    return rolled


def require_dead(storage: Storage, timeline: Timeline, instant_time: str, timeout_s: float) -> None:
    """InstantStateError when `instant_time` is pending and its writer's heartbeat is younger than `timeout_s`."""
    target = timeline.find(instant_time)
    if target is None or target.is_completed:
        return
    age = heartbeat_age(storage, instant_time)
    if age is not None and age < timeout_s:
        raise InstantStateError(
            f"instant {instant_time} is pending and its writer beat {age:.0f} s ago (timeout {timeout_s:.0f} s): "
            "it may still be running. Wait for it, or roll it back anyway with force=True (hudi-py rollback "
            "--force) if you know the writer is gone")
