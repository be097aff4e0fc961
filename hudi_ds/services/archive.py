"""Archiving: move the oldest instants off the active timeline: into `.hoodie/archived/` (layout 1, version 6),
or into the LSM history `.hoodie/timeline/history/` (layout 2, versions 8 and 9: hudi_ds.timeline.lsm_history,
one row per completed instant with its completed file and its plan).

Hudi 0.14/0.15 keep archived instants in log files `.hoodie/archived/.commits_.archive.<version>_<token>`
(file id `commits`, no base instant) made of Avro data blocks (header: SCHEMA only) of
HoodieArchivedMetaEntry records, one record per instant file (requested, inflight, completed), ten records
per block. Storage without append gets a new version per archival, as here.

What moves: when more than `max_commits` completed commits are active, every instant (any action, any
state) older than a boundary, which keeps at least `min_commits` commits active and never passes the
earliest pending instant (a write, a compaction plan, a clean), the delta commits the next compaction of a
merge-on-read table needs (Hudi's earliest instant to retain for compaction), the earliest commit the latest clean
retains (time travel inside the retained window keeps working), a replacecommit whose replaced file
groups still have files (without it readers would see them again), or an action hudi_ds cannot convert.
Archiving a prefix of the timeline leaves no holes: hudi_ds readers treat data of instants older than the
first active instant as committed (`Visibility.earliest_active`), which is then exactly right.

The archive file (or history file and manifest) is written first, then the instant files are deleted (pending states first, completed ones
oldest first, as Hudi does); a crash in between leaves instants both archived and active, which is harmless.
"""

from __future__ import annotations

import io
import json
import posixpath
import struct
from typing import Any

import fastavro

from hudi_ds.config.retention_rules import check_archive_window
from hudi_ds.config.writable import check_writable
from hudi_ds.files.naming import parse_base_file, parse_log_file
from hudi_ds.log.blocks import CONTENT_VERSION
from hudi_ds.log.format import BlockType, HeaderKey, encode_block
from hudi_ds.metadata.sync import archive_limits
from hudi_ds.recovery.heartbeat import stop_heartbeat
from hudi_ds.services.archive_schema import ARCHIVED_META_ENTRY, ENTRY_FIELDS
from hudi_ds.services.target import ServiceTarget
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S, HOODIE_DIR, temp_dir
from hudi_ds.table_format import TableFormat
from hudi_ds.timeline import CommitMetadata, Instant, State, Timeline, parse_instant_file_name
from hudi_ds.timeline.archived import ARCHIVE_FILE_ID, read_archived
from hudi_ds.timeline.avro_models import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMPACTION_PLAN,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
    decode_avro_instant,
    java_schema_json,
)
from hudi_ds.timeline.instant import action_family
from hudi_ds.timeline.lsm_history import append_history, history_row

__all__ = ["ARCHIVE_FOLDER", "archive", "read_archived"]

ARCHIVE_FOLDER = ".hoodie/archived"
ARCHIVE_WRITE_TOKEN = "1-0-1"  # Hudi's HoodieLogFormat.UNKNOWN_WRITE_TOKEN
BATCH = 10  # hoodie.commits.archival.batch
SUPPORTED = frozenset({"commit", "deltacommit", "replacecommit", "compaction", "clean", "rollback"})
_I = struct.Struct(">i")
_SCHEMA_JSON = java_schema_json(ARCHIVED_META_ENTRY)
_PARSED = fastavro.parse_schema(json.loads(_SCHEMA_JSON), named_schemas={})


# --- boundary ----------------------------------------------------------------------------------------------


def _clean_boundary(timeline: Timeline) -> str | None:
    """The earliest commit the latest completed clean retains."""
    cleans = [i for i in timeline.completed() if i.action == "clean"]
    if not cleans:
        return None
    meta = timeline.read_avro(cleans[-1], reader_schema=CLEAN_METADATA)
    return meta.get("earliestCommitToRetain") or None


def _live_file_groups(storage: Storage) -> set[tuple[str, str]]:
    out = set()
    for entry in storage.walk_files(""):
        if entry.path.startswith(".hoodie/"):
            continue
        partition, _, name = entry.path.rpartition("/")
        ref = parse_base_file(partition, name) or parse_log_file(partition, name)
        if ref is not None:
            out.add((partition, ref.file_id))
    return out


def _compaction_boundary(timeline: Timeline, delta_commits: int) -> str | None:
    """Hudi's earliest instant to retain for compaction (merge-on-read): the delta commits that completed after
    the latest completed compaction stay active until there are `delta_commits` of them (the next plan takes
    their logs, and on version 8+ which slice a log belongs to depends on its commit's completion time), then
    the last `delta_commits` of them."""
    compactions = [i for i in timeline.commits() if i.action == "commit"]
    after = compactions[-1].requested_time if compactions else ""
    deltas = [i for i in timeline.commits() if i.action == "deltacommit"
              and (i.completion_time or i.requested_time) > after]
    if len(deltas) < delta_commits:
        return compactions[-1].requested_time if compactions else (deltas[0].requested_time if deltas else None)
    return deltas[len(deltas) - delta_commits].requested_time


def _sliced_by_completion(inst: Instant, bases: list[str]) -> bool:
    """A delta commit that completed after a base instant (a compaction, a replace) was requested while it was
    running (layout 2): its requested and completion times put its logs into different slices."""
    if not inst.completion_time:
        return False
    return any(inst.requested_time < b < inst.completion_time for b in bases)


def archive_boundary(storage: Storage, timeline: Timeline, min_commits: int, max_commits: int,
                     compaction_delta_commits: int | None = None) -> str | None:
    """Requested time of the oldest instant that stays active, or None when nothing is to be archived.
    `compaction_delta_commits` (merge-on-read tables: hoodie.compact.inline.max.delta.commits) keeps the delta
    commits the next compaction needs."""
    commits = timeline.commits()
    if len(commits) <= max_commits:
        return None
    limits = [commits[len(commits) - min_commits].requested_time]
    if compaction_delta_commits is not None:
        limits += [t for t in [_compaction_boundary(timeline, compaction_delta_commits)] if t]
    limits += [i.requested_time for i in timeline.pending()[:1]]
    limits += [i.requested_time for i in timeline.instants if i.action not in SUPPORTED][:1]
    limits += archive_limits(storage)
    cleaned = _clean_boundary(timeline)
    if cleaned:
        limits.append(cleaned)
    boundary = min(limits)
    live: set[tuple[str, str]] | None = None
    bases = sorted(i.requested_time for i in commits if i.action in ("commit", "replacecommit"))
    for inst in commits:
        if inst.requested_time >= boundary:
            break
        if inst.action == "deltacommit" and _sliced_by_completion(inst, bases):
            # its logs belong to the slice of a base instant requested while it ran: a reader that knows only
            # the active timeline's completion times (hudi-rs) would slice them by their name; keep it active
            # while they exist
            paths = [path for stat in timeline.commit_metadata(inst).write_stats() for path in stat.all_paths()]
            if any(storage.exists(path) for path in paths):
                boundary = inst.requested_time
                break
        if inst.action == "replacecommit":
            replaced = timeline.commit_metadata(inst).replaced_file_ids()
            live = _live_file_groups(storage) if live is None else live
            if any((p, fid) in live for p, ids in replaced.items() for fid in ids):
                boundary = inst.requested_time
                break
    return boundary


# --- records -----------------------------------------------------------------------------------------------


def _entry(storage: Storage, name: str, inst: Instant) -> dict[str, Any]:
    """One HoodieArchivedMetaEntry for the instant file `name` (Hudi's MetadataConversionUtils)."""
    path = posixpath.join(HOODIE_DIR, name)
    data = storage.read_bytes(path)
    rec: dict[str, Any] = dict.fromkeys(ENTRY_FIELDS)
    rec.update(commitTime=inst.requested_time, actionType=inst.action, actionState=inst.state.name, version=1)
    action, state = inst.action, inst.state
    if action in ("commit", "deltacommit"):
        rec["hoodieCommitMetadata"] = CommitMetadata.from_json_bytes(data, path).to_avro_record(False)
    elif action == "replacecommit" and data:
        if state is State.COMPLETED:
            meta = CommitMetadata.from_json_bytes(data, path)
            rec["hoodieReplaceCommitMetadata"] = meta.to_avro_record(True)
        elif state is State.INFLIGHT:
            meta = CommitMetadata.from_json_bytes(data, path)
            rec["HoodieInflightReplaceMetadata"] = meta.to_avro_record(False)
        else:
            rec["hoodieRequestedReplaceMetadata"] = decode_avro_instant(
                data, path, REQUESTED_REPLACE_METADATA)
    elif action == "clean":
        if state is State.COMPLETED:
            rec["hoodieCleanMetadata"] = decode_avro_instant(data, path, CLEAN_METADATA)
        else:  # the plan: the requested file, or the inflight one, which repeats it (an archiver killed
            # midway may have removed the requested file already)
            requested = posixpath.join(HOODIE_DIR, f"{inst.requested_time}.clean.requested")
            plan = data or (storage.read_bytes(requested) if storage.exists(requested) else b"")
            rec["hoodieCleanerPlan"] = decode_avro_instant(plan, path, CLEANER_PLAN) if plan else None
    elif action == "rollback" and state is State.COMPLETED:
        rec["hoodieRollbackMetadata"] = decode_avro_instant(data, path, ROLLBACK_METADATA)
    elif action == "compaction" and state is State.REQUESTED:
        rec["hoodieCompactionPlan"] = decode_avro_instant(data, path, COMPACTION_PLAN)
    return rec


def _history_rows(storage: Storage, folder: str, files: list[tuple[Instant, str]]) -> list[dict[str, Any]]:
    """The LSM history rows (layout 2) of the completed instants among `files`: the completed file's bytes as
    metadata, the requested file's (a compaction, clean, rollback or replace plan) as the plan. Pending instants
    are never archived (the boundary stops before the first one)."""
    by_instant: dict[tuple[str, str], dict[State, str]] = {}
    for inst, name in files:
        by_instant.setdefault((inst.requested_time, action_family(inst.action)), {})[inst.state] = name
    rows = []
    for inst, name in files:
        if not inst.is_completed or inst.completion_time is None:
            continue
        states = by_instant[(inst.requested_time, action_family(inst.action))]
        # a clean's inflight file repeats its plan: an archiver killed after deleting the requested file
        # left it
        planned = states.get(State.REQUESTED) or (states.get(State.INFLIGHT) if inst.action == "clean" else None)
        plan = storage.read_bytes(posixpath.join(folder, planned)) if planned else b""
        rows.append(history_row(inst.requested_time, inst.completion_time, inst.action,
                                storage.read_bytes(posixpath.join(folder, name)), plan or None))
    return rows


def _encode_blocks(records: list[dict[str, Any]]) -> bytes:
    out = []
    for start in range(0, len(records), BATCH):
        batch = records[start:start + BATCH]
        parts = [_I.pack(CONTENT_VERSION), _I.pack(len(batch))]
        for rec in batch:
            buf = io.BytesIO()
            fastavro.schemaless_writer(buf, _PARSED, rec)
            parts += [_I.pack(buf.tell()), buf.getvalue()]
        out.append(encode_block(BlockType.AVRO_DATA, {HeaderKey.SCHEMA: _SCHEMA_JSON}, b"".join(parts)))
    return b"".join(out)


def _write_archive_file(storage: Storage, content: bytes) -> str:
    versions = [lf.version for e in storage.list(ARCHIVE_FOLDER)
                if (lf := parse_log_file(ARCHIVE_FOLDER, e.name)) is not None
                and lf.file_id == ARCHIVE_FILE_ID]
    version = max(versions, default=0) + 1
    while True:
        rel = f"{ARCHIVE_FOLDER}/.{ARCHIVE_FILE_ID}_.archive.{version}_{ARCHIVE_WRITE_TOKEN}"
        if storage.put_if_absent(rel, content):
            return rel
        version += 1


# --- archive -----------------------------------------------------------------------------------------------


def archive(table: ServiceTarget, *, min_commits: int = 20, max_commits: int = 30,
            compaction_delta_commits: int = 5) -> list[str]:
    """Archive the oldest instants when more than `max_commits` completed commits are active, keeping at
    least `min_commits` (and, merge-on-read, the delta commits the next compaction of every
    `compaction_delta_commits` needs); returns the requested times of the archived instants (oldest first)."""
    check_archive_window(min_commits, max_commits)
    storage = table.storage
    check_writable(table.config)
    retain = compaction_delta_commits if table.config.is_mor else None
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):  # one archiver at a time, among all writers
        return _archive(storage, table.config.format, min_commits, max_commits, retain)


def _archive(storage: Storage, fmt: TableFormat, min_commits: int, max_commits: int,
             compaction_delta_commits: int | None) -> list[str]:
    timeline = fmt.load_timeline(storage)
    boundary = archive_boundary(storage, timeline, min_commits, max_commits, compaction_delta_commits)
    if boundary is None:
        return []
    files: list[tuple[Instant, str]] = []
    for entry in storage.list(fmt.timeline_dir):
        inst = None if entry.is_dir else parse_instant_file_name(entry.name, fmt.layout)
        if inst is not None and inst.requested_time < boundary:
            files.append((inst, entry.name))
    if not files:
        return []
    files.sort(key=lambda f: (f[0].requested_time, action_family(f[0].action), f[0].state.rank))
    if fmt.layout == 1:
        _write_archive_file(storage, _encode_blocks([_entry(storage, name, inst) for inst, name in files]))
    else:
        append_history(storage, fmt.archive_dir, _history_rows(storage, fmt.timeline_dir, files))
    # pending states first, then completed instants oldest first: the active timeline never has a hole
    for _, name in [f for f in files if not f[0].is_completed] + [f for f in files if f[0].is_completed]:
        storage.delete(posixpath.join(fmt.timeline_dir, name))
    times = sorted({inst.requested_time for inst, _ in files})
    for ts in times:
        storage.delete_dir(temp_dir(ts))
        stop_heartbeat(storage, ts)
    return times
