"""Writing the LSM history (timeline layout 2, v8/v9): what archiving appends to `.hoodie/timeline/history/`.

As Java's `LSMTimelineWriter` (Hudi 1.x) does: a batch of completed actions, oldest first, becomes one parquet file
`<first instant>_<last instant>_0.parquet` of HoodieLSMTimelineInstant rows (`HoodieLSMTimelineInstant.avsc`:
instantTime, completionTime, action, metadata = the completed instant file's bytes, plan = the plan or requested
file's bytes, version = 1); then `manifest_<N+1>` names the files of snapshot N plus the new one (with their
lengths); then `_version_` says N+1. Once ten files sit in a level (`hoodie.timeline.compaction.batch.size`), the
oldest of them (at most 1 GiB together) are merged into one file of the next level, the manifest swapping them,
and snapshots beyond the last 3 (plus one per compacted level) are cleaned with the files only they name.

Crash safety (a SIGKILL at any point leaves a readable history, and the next archival repairs it): readers only
read the files the latest manifest names, and each step publishes a complete file before anything names it.
- Killed while the parquet file is written: no manifest names it; the next append of the same batch finds it
  unnamed, deletes it and writes it again (the archiver deletes the active instants only after `append` returns,
  so the batch is archived again).
- Killed after the parquet file, before the manifest: the same.
- Killed after `manifest_<N+1>`, before `_version_`: `_version_` still says N and readers read snapshot N; the next
  append builds N+1 again from N (overwriting the stray manifest). A missing `_version_` makes readers take the
  highest manifest, which is complete: then the batch reads both archived and active, and active wins.
- Killed during compaction or cleaning: the compacted file is unnamed until its manifest is published, and
  cleaning deletes only what no kept snapshot names.
Every file is written whole (`Storage.write_bytes`: staged then renamed locally, one PUT on object stores).
"""

from __future__ import annotations

import io
import json
import posixpath
from collections.abc import Iterable, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ds.errors import UnsupportedTableError
from hudi_ds.storage import Storage
from hudi_ds.timeline.archived import (
    MANIFEST_PREFIX,
    VERSION_FILE,
    lsm_file_name,
    parse_lsm_file_name,
    read_manifest,
)
from hudi_ds.timeline.avro_models import encode_avro_instant
from hudi_ds.timeline.avro_schemas import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMMIT_METADATA,
    COMPACTION_PLAN,
    REPLACE_COMMIT_METADATA,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
    Schema,
)
from hudi_ds.timeline.commit_metadata import jackson_pretty
from hudi_ds.timeline.instant import action_family

__all__ = ["LSM_INSTANT_SCHEMA", "ROW_SCHEMA", "append_history", "history_row", "rows_from_archived"]

# HoodieLSMTimelineInstant.avsc (Hudi 1.x), field for field
LSM_INSTANT_SCHEMA: Schema = {
    "type": "record", "name": "HoodieLSMTimelineInstant", "namespace": "org.apache.hudi.avro.model", "fields": [
        {"name": "instantTime", "type": ["null", "string"], "default": None},
        {"name": "completionTime", "type": ["null", "string"], "default": None},
        {"name": "action", "type": ["null", "string"], "default": None},
        {"name": "metadata", "type": ["null", "bytes"], "default": None},
        {"name": "plan", "type": ["null", "bytes"], "default": None},
        {"name": "version", "type": "int", "default": 1},
    ]}
# the same as parquet-avro writes it: optional strings and binaries, a required int32
ROW_SCHEMA = pa.schema([
    pa.field("instantTime", pa.string()), pa.field("completionTime", pa.string()), pa.field("action", pa.string()),
    pa.field("metadata", pa.binary()), pa.field("plan", pa.binary()), pa.field("version", pa.int32(), nullable=False),
])
_FOOTER = {"parquet.avro.schema": json.dumps(LSM_INSTANT_SCHEMA, separators=(",", ":")), "writer.model.name": "avro"}
LSM_INSTANT_VERSION = 1
COMPACTION_BATCH = 10  # hoodie.timeline.compaction.batch.size
COMPACTION_MAX_BYTES = 1 << 30  # hoodie.timeline.compaction.target.file.max.bytes
SNAPSHOTS_KEPT = 3


def history_row(instant_time: str, completion_time: str, action: str, metadata: bytes | None,
                plan: bytes | None = None) -> dict[str, Any]:
    """One HoodieLSMTimelineInstant row: a completed action (`action` is the completed one: `commit` for a
    compaction), the bytes of its completed file and of its plan (or requested file)."""
    return {"instantTime": instant_time, "completionTime": completion_time, "action": action,
            "metadata": metadata, "plan": plan, "version": LSM_INSTANT_VERSION}


def append_history(storage: Storage, folder: str, rows: Iterable[Mapping[str, Any]]) -> str | None:
    """Append a batch of archived actions to the history in `folder` (see the module doc for the order of
    writes); returns the new file's name, None for an empty batch. Compacts a full level afterwards."""
    batch = sorted(rows, key=lambda r: str(r["instantTime"]))
    if not batch:
        return None
    name = lsm_file_name(batch[0]["instantTime"], batch[-1]["instantTime"], 0)
    version, files = read_manifest(storage, folder)
    if any(f["fileName"] == name for f in files):
        return name  # this batch was archived before the archiver died deleting its active instants
    path = posixpath.join(folder, name)
    storage.delete(path)  # a leftover of a killed append of this batch
    storage.write_bytes(path, _parquet(batch))
    _publish(storage, folder, version, [*files, _file_entry(storage, folder, name)])
    _compact(storage, folder)
    return name


def _parquet(rows: list[Mapping[str, Any]]) -> bytes:
    table = pa.Table.from_pylist([dict(r) for r in rows], schema=ROW_SCHEMA)
    buf = io.BytesIO()
    with pq.ParquetWriter(buf, ROW_SCHEMA, compression="gzip", store_schema=False) as writer:
        writer.write_table(table)
        writer.add_key_value_metadata(_FOOTER)  # parquet-avro's keys, no Arrow schema (Java writes none)
    return buf.getvalue()


def _file_entry(storage: Storage, folder: str, name: str) -> dict[str, Any]:
    return {"fileName": name, "fileLen": storage.size(posixpath.join(folder, name))}


def _publish(storage: Storage, folder: str, version: int, files: list[dict[str, Any]]) -> int:
    """Write manifest_<version+1> naming `files`, then point `_version_` at it."""
    new = version + 1
    body = jackson_pretty({"files": [{"fileName": f["fileName"], "fileLen": int(f.get("fileLen") or 0)}
                                     for f in files]})
    storage.write_bytes(posixpath.join(folder, f"{MANIFEST_PREFIX}{new}"), body.encode("utf-8"))
    storage.write_bytes(posixpath.join(folder, VERSION_FILE), str(new).encode("utf-8"))
    return new


def _compact(storage: Storage, folder: str) -> None:
    """Merge the oldest files of each full level into the next level, then clean old snapshots."""
    level = 0
    while True:
        version, files = read_manifest(storage, folder)
        here = sorted((f for f in files if (parse_lsm_file_name(f["fileName"]) or ("", "", -1))[2] == level),
                      key=lambda f: f["fileName"])
        if len(here) < COMPACTION_BATCH:
            break
        picked: list[dict[str, Any]] = []
        size = 0
        for f in here:  # consecutive files, at most a batch, at most COMPACTION_MAX_BYTES unless only one
            picked.append(f)
            size += int(f.get("fileLen") or 0)
            if len(picked) >= COMPACTION_BATCH:
                break
            if size > COMPACTION_MAX_BYTES:
                if len(picked) >= 2:
                    break
                picked, size = [], 0
        if len(picked) < 2:
            break
        names = [f["fileName"] for f in picked]
        bounds = [parse_lsm_file_name(n) for n in names]
        merged = lsm_file_name(min(b[0] for b in bounds if b), max(b[1] for b in bounds if b), level + 1)
        tables = [pq.read_table(pa.BufferReader(storage.read_bytes(posixpath.join(folder, n)))) for n in names]
        rows = pa.concat_tables([t.select(ROW_SCHEMA.names).cast(ROW_SCHEMA) for t in tables]).to_pylist()
        path = posixpath.join(folder, merged)
        storage.delete(path)
        storage.write_bytes(path, _parquet(rows))
        kept = [f for f in files if f["fileName"] not in names]
        _publish(storage, folder, version, [*kept, _file_entry(storage, folder, merged)])
        level += 1
    if level:
        _clean(storage, folder, level)


def _clean(storage: Storage, folder: str, compacted_levels: int) -> None:
    """Delete snapshots older than the last SNAPSHOTS_KEPT + `compacted_levels`, and files none of the kept ones
    names (a reader of an older snapshot has had that many archivals' time to finish)."""
    listed = storage.list(folder)
    versions = sorted((int(e.name[len(MANIFEST_PREFIX):]) for e in listed
                       if e.name.startswith(MANIFEST_PREFIX) and e.name[len(MANIFEST_PREFIX):].isdigit()),
                      reverse=True)
    keep = versions[:SNAPSHOTS_KEPT + compacted_levels]
    if len(versions) <= len(keep):
        return
    named: set[str] = set()
    for v in keep:
        doc = json.loads(storage.read_bytes(posixpath.join(folder, f"{MANIFEST_PREFIX}{v}")).decode("utf-8"))
        named.update(f["fileName"] for f in doc.get("files") or [])
    for v in versions[len(keep):]:
        storage.delete(posixpath.join(folder, f"{MANIFEST_PREFIX}{v}"))
    for e in listed:
        if parse_lsm_file_name(e.name) is not None and e.name not in named:
            storage.delete(e.path)


# --- layout 1 archives into history rows (the 6 -> 8/9 upgrade) --------------------------------------------

# completed action -> (HoodieArchivedMetaEntry field, schema of the completed file)
_COMPLETED: dict[str, tuple[str, Schema]] = {
    "commit": ("hoodieCommitMetadata", COMMIT_METADATA),
    "deltacommit": ("hoodieCommitMetadata", COMMIT_METADATA),
    "replacecommit": ("hoodieReplaceCommitMetadata", REPLACE_COMMIT_METADATA),
    "clean": ("hoodieCleanMetadata", CLEAN_METADATA),
    "rollback": ("hoodieRollbackMetadata", ROLLBACK_METADATA),
}


def rows_from_archived(entries: Iterable[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """History rows for the HoodieArchivedMetaEntry records of a layout-1 archive (as `read_archived` yields
    them), oldest first: one per completed action, its metadata record as an Avro file, as Java's upgrade
    (`LegacyArchivedMetaEntryReader` feeding `LSMTimelineWriter`) converts them. Pending actions are dropped
    (history holds completed ones). The plan is kept for cleans and replacecommits too (Java's upgrade keeps only
    compaction plans; its archiver of v8 tables keeps all). The completion time is the entry's
    `stateTransitionTime`, else its instant time (Hudi 0.x did not always record one; Java leaves it null)."""
    groups: dict[tuple[str, str], dict[str, Mapping[str, Any]]] = {}
    for rec in entries:
        ts, action = rec.get("commitTime"), rec.get("actionType")
        if not isinstance(ts, str) or not isinstance(action, str):
            raise UnsupportedTableError(f"an archived entry without commitTime/actionType: {ts!r} {action!r}")
        state = str(rec.get("actionState") or "COMPLETED")
        groups.setdefault((ts, action_family(action)), {})[state] = rec
    rows = []
    for (ts, _), states in sorted(groups.items()):
        done = states.get("COMPLETED")
        if done is None:
            continue
        action = str(done["actionType"])
        if action not in _COMPLETED:
            raise UnsupportedTableError(
                f"archived instant {ts} is a {action}; hudi_ds converts archived "
                f"{', '.join(sorted(_COMPLETED))} instants only")
        key, schema = _COMPLETED[action]
        record = done.get(key)
        metadata = encode_avro_instant(record, schema) if record is not None else None
        rows.append(history_row(ts, str(done.get("stateTransitionTime") or ts), action, metadata,
                                _plan(states)))
    return rows


def _plan(states: Mapping[str, Mapping[str, Any]]) -> bytes | None:
    """The plan Java's createLSMTimelineInstant keeps: the clean or compaction plan; for a replacecommit the
    requested metadata, replaced by the inflight commit metadata when there is one."""
    requested, inflight = states.get("REQUESTED") or {}, states.get("INFLIGHT") or {}
    for source, key, schema in (
            (requested, "hoodieCleanerPlan", CLEANER_PLAN), (inflight, "hoodieCleanerPlan", CLEANER_PLAN),
            (requested, "hoodieCompactionPlan", COMPACTION_PLAN), (inflight, "hoodieCompactionPlan", COMPACTION_PLAN),
            (inflight, "HoodieInflightReplaceMetadata", COMMIT_METADATA),
            (requested, "hoodieRequestedReplaceMetadata", REQUESTED_REPLACE_METADATA)):
        if source.get(key) is not None:
            return encode_avro_instant(source[key], schema)
    return None
