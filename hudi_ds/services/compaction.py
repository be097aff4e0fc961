"""Compaction of merge-on-read tables: schedule a plan, execute it, in the background if wanted.

Scheduling (`schedule_compaction`) writes `<C>.compaction.requested`, an Avro HoodieCompactionPlan naming
every file group whose latest slice has log files. Execution (`run_compaction`) marks it
`<C>.compaction.inflight`, merges each planned slice (base file + committed log blocks, the reader's merge
rule) into one new base file `<fileId>_<token>_<C>.parquet` per file group, and publishes `<C>.commit`
(JSON commit metadata, `compacted: true`, operation `COMPACT`) - the single point at which readers switch to
the new slices. Records keep their `_hoodie_commit_time` / `_hoodie_commit_seqno`, as Hudi's compaction
preserves them, so incremental queries never return rows "changed" by a compaction.

Concurrency (spec §2.5, Hudi's rule). While a plan is pending, writers put the logs of its file groups in
the new slice (base instant C; see `compaction_plan` and the write coordinator's `_group_targets`) and never
touch base files; the compaction reads only the previous slice and never writes logs. So `run_compaction`
may run in a background thread or process while writes continue (`CompactionRunner`). Scheduling needs a
quiet moment instead: it does nothing while a write is in flight (Hudi's single-writer check), which is why
the streaming sink schedules between micro-batches and executes asynchronously. Before publishing, the
executor checks that the slices it read did not change (a write that could not see the plan); if they did,
it discards its output and runs again.

Failures leave the plan pending. The next run removes the partial files of the failed attempt (through its
markers), records a rollback instant as Hudi does, and executes the plan again.
"""

from __future__ import annotations

import json
import secrets
import threading
import time
import uuid
from collections.abc import Callable, Iterable
from concurrent.futures import ThreadPoolExecutor
from typing import Any

from hudi_ds.config import TableConfig
from hudi_ds.config.writable import check_writable
from hudi_ds.errors import CommitConflictError, ConfigError, InstantNotFoundError
from hudi_ds.files.compaction_plan import (
    PENDING_ACTION,
    CompactionOperation,
    pending_compactions,
    pending_operations,
    read_plan,
)
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.index.choice import writes_bloom_filters
from hudi_ds.read.query import TableSnapshot
from hudi_ds.recovery.heartbeat import (
    DEFAULT_HEARTBEAT_TIMEOUT_S,
    heartbeat_age,
    stop_heartbeat,
    touch_heartbeat,
)
from hudi_ds.recovery.rollback import revert_compaction_attempt
from hudi_ds.schema.avro import arrow_to_avro
from hudi_ds.schema.meta import strip_meta
from hudi_ds.services.compaction_exec import (
    ExecOptions,
    SliceInputs,
    compact_slice,
    input_slice,
    inputs_changed,
    schema_metadata,
)
from hudi_ds.services.target import ServiceTarget
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S, executor_path, temp_dir
from hudi_ds.table_format import TableFormat
from hudi_ds.timeline import (
    COMMIT_ACTIONS,
    CommitMetadata,
    State,
    Timeline,
    WriteStat,
    new_instant_time,
)
from hudi_ds.timeline.avro_models import (
    COMPACTION_PLAN,
    compaction_operation,
    compaction_plan,
    encode_avro_instant,
)

__all__ = ["CompactionRunner", "compact", "run_compaction", "schedule_compaction"]

DEFAULT_ROW_GROUP_BYTES = 120 * 1024 * 1024  # Hudi's hoodie.parquet.block.size
_DEFAULT_BASE_FILE_BYTES = 120 * 1024 * 1024  # hoodie.parquet.max.file.size: the plan's write estimate
_MB = 1024 * 1024
_THREADS = 2
_ATTEMPTS = 3
_run_locks: dict[str, threading.Lock] = {}
_run_locks_guard = threading.Lock()


def _run_lock(storage: Storage) -> threading.Lock:
    """One executor per table and process at a time (a background runner and a direct call included)."""
    with _run_locks_guard:
        return _run_locks.setdefault(storage.full(""), threading.Lock())


def _check_mor(config: TableConfig) -> None:
    check_writable(config)
    if not config.is_mor:
        raise ConfigError(
            "compaction applies to MERGE_ON_READ tables; this COPY_ON_WRITE table has no log files to "
            "compact")


def _live_writes(storage: Storage, timeline: Timeline, before: str | None = None) -> list[str]:
    """Pending writes whose writer may still be running: heartbeat fresh, or not written yet. (Writers
    roll back dead ones before they commit; the services never do, since a writer between claiming its
    instant and its first heartbeat looks dead.)"""
    out = []
    for i in timeline.pending():
        if i.action in COMMIT_ACTIONS and (before is None or i.requested_time < before):
            age = heartbeat_age(storage, i.requested_time)
            if age is None or age < DEFAULT_HEARTBEAT_TIMEOUT_S:
                out.append(i.requested_time)
    return out


def _wait_for(storage: Storage, fmt: TableFormat, instants: Iterable[str], wait_s: float) -> bool:
    """Wait until none of `instants` is pending any more; False on timeout."""
    wanted = set(instants)
    deadline = time.monotonic() + wait_s
    delay = 0.02
    while wanted:
        timeline = fmt.load_timeline(storage)
        wanted = {t for t in wanted if (i := timeline.find(t)) is not None and not i.is_completed}
        if not wanted:
            break
        if time.monotonic() >= deadline:
            return False
        time.sleep(delay)
        delay = min(delay * 2, 0.5)
    return True


# --- scheduling --------------------------------------------------------------------------------------------


def _delta_commits_since_compaction(timeline: Timeline) -> int:
    compactions = [i.requested_time for i in timeline.instants
                   if i.action == PENDING_ACTION or (i.is_completed and i.action == "commit")]
    last = max(compactions, default="")
    return sum(1 for i in timeline.commits() if i.action == "deltacommit" and i.requested_time > last)


def _metrics(sl: FileSlice) -> dict[str, float]:
    """Hudi's per-operation metrics (CompactionStrategy.captureMetrics), sizes in whole MB."""
    log_bytes = sum(lf.size for lf in sl.log_files)
    base_bytes = sl.base_file.size if sl.base_file else 0
    read_mb = (base_bytes + log_bytes) // _MB
    write_mb = (base_bytes if base_bytes > 0 else _DEFAULT_BASE_FILE_BYTES) // _MB
    return {"TOTAL_LOG_FILES": float(len(sl.log_files)), "TOTAL_IO_MB": float(read_mb + write_mb),
            "TOTAL_IO_READ_MB": float(read_mb), "TOTAL_LOG_FILES_SIZE": float(log_bytes),
            "TOTAL_IO_WRITE_MB": float(write_mb)}


def schedule_compaction(table: ServiceTarget, *, min_delta_commits: int = 1, wait_s: float = 60.0) -> str | None:
    """Plan a compaction of every file group whose latest slice has log files; returns its instant C.

    Returns None (and writes nothing) when there is nothing to compact, when fewer than
    `min_delta_commits` delta commits completed since the last compaction (Hudi's
    hoodie.compact.inline.max.delta.commits), or while a write is in flight (Hudi requires every pending
    write to be later than the compaction instant: schedule between writes). A write that started in the
    instant between that check and the plan's creation is waited for (up to `wait_s`).
    """
    storage, config = table.storage, table.config
    _check_mor(config)
    fmt = config.format
    timeline = fmt.load_timeline(storage)
    if _live_writes(storage, timeline) or _delta_commits_since_compaction(timeline) < min_delta_commits:
        return None
    if fmt.completion_times:
        # The plan takes the logs that completed before C: C is minted, the slices listed and the plan written
        # under the commit lock, so every commit completing later gets a completion time after C (its logs then
        # belong to C's new slice) and none completes in between unplanned.
        with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
            instant = _write_plan(storage, config, fmt.load_timeline(storage))
    else:
        instant = _write_plan(storage, config, timeline)
    if instant is None:
        return None
    # A writer that claimed its instant before the plan existed may not have seen it: let it finish, its
    # logs then belong to the slice the executor reads (and the executor re-checks before publishing).
    _wait_for(storage, fmt, _live_writes(storage, fmt.load_timeline(storage)), wait_s)
    return instant


def _write_plan(storage: Storage, config: TableConfig, timeline: Timeline) -> str | None:
    """Create the requested compaction instant with its plan; None when no file group has logs to compact."""
    view = FileSystemView(storage, config, timeline, Visibility.of(timeline, None, timeline.layout))
    busy = pending_operations(timeline)
    ops = []
    for sl in view.latest_slices():
        if not sl.log_files or (sl.partition, sl.file_id) in busy:
            continue
        ops.append(compaction_operation(
            sl.base_instant or sl.log_files[0].instant, sl.file_id, sl.partition,
            sl.base_file.name if sl.base_file else None, [lf.name for lf in sl.log_files], _metrics(sl)))
    if not ops:
        return None
    content = encode_avro_instant(compaction_plan(ops), COMPACTION_PLAN)
    writer = timeline.writer()
    last = timeline.last_instant_time()
    while True:
        instant = new_instant_time(after=last)
        if writer.create_requested(instant, PENDING_ACTION, content):
            return instant
        last = instant


# --- execution ---------------------------------------------------------------------------------------------


def _claim(storage: Storage, fmt: TableFormat, instant: str, executor: str, owner: str | None,
           heartbeat_timeout_s: float) -> str:
    """Take plan `instant` for this executor, atomically with every other process (under the commit lock):
    "elsewhere" (a live executor holds it, or another one completed it), or "claimed" (a dead executor's
    attempt was reverted first). The claim names the executor, so a taken-over executor knows not to publish, and its owner: a
    writer that runs once at a time (a streaming query) takes over its own crashed attempt at once, whatever
    the heartbeat says."""
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        timeline = fmt.load_timeline(storage)
        inst = timeline.find(instant)
        if inst is None or inst.is_completed:
            return "elsewhere"  # completed by another executor (and archived since, if gone)
        if inst.state is State.INFLIGHT:
            age = heartbeat_age(storage, instant)
            mine = owner is not None and _claim_of(storage, instant).get("owner") == owner
            if age is not None and age < heartbeat_timeout_s and not mine:
                return "elsewhere"
            revert_compaction_attempt(storage, timeline, inst)
        timeline.writer().transition_to_inflight(instant, PENDING_ACTION)
        touch_heartbeat(storage, instant)
        storage.write_bytes(executor_path(instant), json.dumps({"executor": executor, "owner": owner}).encode())
    return "claimed"


def _claim_of(storage: Storage, instant: str) -> dict[str, Any]:
    try:
        claim = json.loads(storage.read_bytes(executor_path(instant)))
    except (FileNotFoundError, ValueError):
        return {}
    return claim if isinstance(claim, dict) else {}


def _attempt(table: ServiceTarget, instant: str, options: ExecOptions, heartbeat_timeout_s: float,
             owner: str | None) -> str:
    """One execution of plan `instant`: "completed" (by this executor), "elsewhere" (another executor holds
    it or completed it), or "changed" (a compacted slice changed meanwhile: output discarded, plan pending)."""
    storage, config = table.storage, table.config
    executor = uuid.uuid4().hex
    fmt = config.format
    claim = _claim(storage, fmt, instant, executor, owner, heartbeat_timeout_s)
    if claim != "claimed":
        return claim
    timeline = fmt.load_timeline(storage)
    snap = TableSnapshot(storage, config, timeline)
    schema = snap.full_schema()
    vis = Visibility.of(timeline, None, timeline.layout)
    view = snap.view(vis)
    reader = snap.reader(vis, schema, view.committed_paths())
    avro = arrow_to_avro(schema, config.name)
    work = [(op, sl) for op in read_plan(timeline, timeline.get(instant)) if (sl := input_slice(view, op)) is not None]
    stage = secrets.randbelow(1 << 30)  # write tokens no other executor of this plan uses

    def one(item: tuple[int, tuple[CompactionOperation, FileSlice]]) -> tuple[WriteStat, SliceInputs]:
        n, (op, sl) = item
        touch_heartbeat(storage, instant)
        return compact_slice(storage, reader, op, sl, f"{n}-{stage}-0", avro, options)

    with ThreadPoolExecutor(_THREADS) as pool:
        futures = [pool.submit(one, item) for item in enumerate(work)]
    results, failures = [], []
    for future in futures:
        try:
            results.append(future.result())
        except Exception as exc:  # re-raised below unless the plan was taken over
            failures.append(exc)
    if failures:
        if _claim_of(storage, instant).get("executor") != executor:
            # taken over while it ran (the new executor may already have completed the plan and removed its
            # marker directory, failing this one's next file): its files are its own, by their tokens
            _discard(storage, fmt, instant, results)
            return "elsewhere"
        raise failures[0]
    stats: dict[str, list[WriteStat]] = {}
    for stat, _ in results:
        stats.setdefault(stat.partition_path or "", []).append(stat)
    meta = CommitMetadata(partition_to_write_stats=stats, compacted=True, operation_type="COMPACT",
                          extra_metadata=schema_metadata(timeline, strip_meta(schema), config.name))
    # the check that this executor still holds the plan and that no write changed the compacted slices, and
    # the publish, are one step, as for writes
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        now = fmt.load_timeline(storage)
        outcome = "elsewhere" if _claim_of(storage, instant).get("executor") != executor else (
            "changed" if inputs_changed(storage, now, instant, [inputs for _, inputs in results]) else "completed")
        if outcome == "completed":
            now.writer().complete(instant, PENDING_ACTION, fmt.encode_commit_metadata(meta, "commit"))
        elif outcome == "changed":
            revert_compaction_attempt(storage, now, now.get(instant))
    if outcome == "elsewhere":  # taken over (this executor looked dead): its files are its own, by their tokens
        _discard(storage, fmt, instant, results)
        return outcome
    if outcome == "changed":
        return outcome
    storage.delete_dir(temp_dir(instant))
    stop_heartbeat(storage, instant)
    return outcome


def _discard(storage: Storage, fmt: TableFormat, instant: str, results: list[tuple[WriteStat, SliceInputs]]) -> None:
    """Delete the base files an executor that lost its plan wrote, and the markers it wrote again after the
    executor that took over completed the plan (while that one runs, the markers are its own)."""
    for stat, _ in results:
        if stat.path and storage.exists(stat.path):
            storage.delete(stat.path)
    inst = fmt.load_timeline(storage).find(instant)
    if inst is None or inst.is_completed:
        storage.delete_dir(temp_dir(instant))


def run_compaction(table: ServiceTarget, instant: str | None = None, *, row_group_rows: int | None = None,
                   row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES, compression: str = "snappy",
                   wait_s: float = 60.0, heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S,
                   owner: str | None = None) -> list[str]:
    """Execute pending compaction plans (all, oldest first, or only `instant`); returns the instants
    completed by this call.

    Each file group gets exactly one new base file, written in row groups of `row_group_rows` rows or, by
    default, of about `row_group_bytes` (in-memory size; Hudi's hoodie.parquet.block.size). A plan another
    live executor holds (fresh heartbeat) is skipped, unless its claim names `owner` (a writer that runs
    once at a time, taking over its own crashed attempt); so is, for now, a plan that a write older than it
    is still writing to (waited for up to `wait_s`). Safe to call while other threads and processes write.
    """
    storage = table.storage
    _check_mor(table.config)
    options = ExecOptions(row_group_rows, row_group_bytes, compression, writes_bloom_filters(table.config))
    done: list[str] = []
    with _run_lock(storage):
        timeline = table.config.format.load_timeline(storage)
        plans = pending_compactions(timeline)
        if instant is not None:
            target = timeline.find(instant)
            if target is None or target.action not in (PENDING_ACTION, "commit"):
                raise InstantNotFoundError(
                    f"no compaction {instant} on the timeline; see HudiTable.timeline()")
            plans = [p for p in plans if p.requested_time == instant]
        for inst in plans:
            if not _wait_for(storage, table.config.format, _live_writes(storage, timeline, before=inst.requested_time),
                             wait_s):
                continue
            try:
                for _ in range(_ATTEMPTS):
                    outcome = _attempt(table, inst.requested_time, options, heartbeat_timeout_s, owner)
                    if outcome != "changed":
                        break
                else:
                    raise CommitConflictError(
                        f"the file groups of compaction {inst.requested_time} kept changing while it ran "
                        "(writes that did not see the plan); its output was discarded and the plan is still "
                        "pending: run it again")
            except BaseException:
                stop_heartbeat(storage, inst.requested_time)  # not alive: a re-run may take over
                raise
            if outcome == "completed":
                done.append(inst.requested_time)
    return done


def compact(table: ServiceTarget, *, min_delta_commits: int = 1, row_group_rows: int | None = None,
            row_group_bytes: int = DEFAULT_ROW_GROUP_BYTES,
            heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S) -> list[str]:
    """Schedule a compaction (if due) and execute every pending plan; returns the completed instants."""
    schedule_compaction(table, min_delta_commits=min_delta_commits)
    return run_compaction(table, row_group_rows=row_group_rows, row_group_bytes=row_group_bytes,
                          heartbeat_timeout_s=heartbeat_timeout_s)


class CompactionRunner:
    """Executes pending compactions of one table in a background daemon thread (async compaction).

    A writer (the streaming sink) calls `schedule_compaction` between its commits and then `trigger()`:
    the runner executes every pending plan while the writer goes on writing (the writer targets the plans'
    new slices, the compaction only rewrites base files). A trigger during a run queues one more run.
    Errors never reach the writer's thread: they are kept in `errors` and passed to `on_error`; `wait()`
    blocks until the runner is idle.
    """

    def __init__(self, table: ServiceTarget, *, on_error: Callable[[BaseException], None] | None = None,
                 **options: Any) -> None:
        self.table = table
        self.options = options
        self.on_error = on_error
        self.completed: list[str] = []
        self.errors: list[BaseException] = []
        self._cond = threading.Condition()
        self._requested = False
        self._running = False

    @property
    def busy(self) -> bool:
        with self._cond:
            return self._requested or self._running

    def trigger(self) -> None:
        """Run pending compactions in the background (now, or right after the current run)."""
        with self._cond:
            self._requested = True
            if self._running:
                return
            self._running = True
        name = f"hudi-compaction-{self.table.config.name}"
        threading.Thread(target=self._loop, name=name, daemon=True).start()

    def _loop(self) -> None:
        while True:
            with self._cond:
                if not self._requested:
                    self._running = False
                    self._cond.notify_all()
                    return
                self._requested = False
            try:
                done = run_compaction(self.table, **self.options)
                with self._cond:
                    self.completed.extend(done)
            except BaseException as exc:  # noqa: BLE001 - reported, never raised in the writer's thread
                with self._cond:
                    self.errors.append(exc)
                if self.on_error is not None:
                    self.on_error(exc)

    def wait(self, timeout: float | None = None) -> bool:
        """Block until no run is in progress or queued; False on timeout."""
        with self._cond:
            return self._cond.wait_for(lambda: not self._requested and not self._running, timeout)
