"""The archived timeline: the instants archiving moved off the active timeline, with their metadata.

Layout 1 (table v6, Hudi 0.x): `.hoodie/archived/.commits_.archive.<N>_<token>` log files of Avro data blocks,
each record a HoodieArchivedMetaEntry for one instant file (requested, inflight, completed; `actionState`
missing on very old archives means completed). The block header carries the writer schema.
Layout 2 (v8/v9, Hudi 1.x LSM history, Java `LSMTimeline`): `.hoodie/timeline/history/` holds parquet files
`<min>_<max>_<level>.parquet` of HoodieLSMTimelineInstant rows (instantTime, completionTime, action, metadata,
plan, version), one row per completed action; `manifest_<N>` (JSON `{"files": [{"fileName", "fileLen"}]}`) names
the files of snapshot N and `_version_` holds the latest N (when it is missing or unreadable, the highest
`manifest_<N>` listed). Files the manifest does not name are leftovers of a crash and are not read.
`metadata` is the completed instant file's content (an Avro file; JSON is read too).

Nothing here is read until a query reaches back before the active timeline (`with_history`); each archive file
is parsed once per process (keyed by path, size and modification time, as completed instants are), and commit
metadata is decoded on first use. A malformed file, or a manifest naming a missing one, is a CorruptTableError
naming it; paths in archived commit metadata are checked like those of active instants.
"""

from __future__ import annotations

import io
import json
import posixpath
import re
import struct
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa

from hudi_ds.errors import CorruptTableError, InstantNotFoundError
from hudi_ds.files.naming import parse_log_file
from hudi_ds.log.format import BlockType, read_blocks
from hudi_ds.storage import FileEntry, Storage
from hudi_ds.timeline.avro_models import AVRO_MAGIC, decode_avro_instant
from hudi_ds.timeline.avro_schemas import Schema
from hudi_ds.timeline.commit_metadata import CommitMetadata
from hudi_ds.timeline.instant import COMMIT_ACTIONS, Instant, State, action_family
from hudi_ds.timeline.timeline import Timeline

__all__ = [
    "ARCHIVE_FILE_ID", "MANIFEST_PREFIX", "VERSION_FILE", "ArchivedTimeline", "lsm_file_name", "parse_lsm_file_name",
    "read_archived", "read_manifest", "with_history",
]

ARCHIVE_FILE_ID = "commits"  # layout 1: `.commits_.archive.<N>_<token>`
VERSION_FILE = "_version_"
MANIFEST_PREFIX = "manifest_"
_LSM_FILE = re.compile(r"(\d+)_(\d+)_(\d+)\.parquet")
_INSTANT_TIME = re.compile(r"\d{14,}")
_I = struct.Struct(">i")
# the HoodieArchivedMetaEntry field holding a completed instant's metadata, per action (layout 1)
_ENTRY_FIELD = {"commit": "hoodieCommitMetadata", "deltacommit": "hoodieCommitMetadata",
                "replacecommit": "hoodieReplaceCommitMetadata", "clean": "hoodieCleanMetadata",
                "rollback": "hoodieRollbackMetadata", "savepoint": "hoodieSavePointMetadata"}


def lsm_file_name(min_instant: str, max_instant: str, level: int) -> str:
    """`<min>_<max>_<level>.parquet`, as Java's LSMTimelineWriter names a history file."""
    return f"{min_instant}_{max_instant}_{level}.parquet"


def parse_lsm_file_name(name: str) -> tuple[str, str, int] | None:
    """(min instant, max instant, level) of a history file name; None for anything else."""
    m = _LSM_FILE.fullmatch(name)
    return (m.group(1), m.group(2), int(m.group(3))) if m else None


@dataclass
class _Entry:
    """One archived instant in its latest state; its metadata (a decoded Avro record, or the bytes of the
    completed instant file) is parsed on first use."""

    instant: Instant
    source: str  # the archive file it was read from
    payload: dict[str, Any] | bytes | None
    _commit: CommitMetadata | None = field(default=None, repr=False)

    def commit_metadata(self) -> CommitMetadata:
        if self._commit is None:
            payload = self.payload
            try:
                if isinstance(payload, dict):
                    meta = CommitMetadata.from_avro_record(payload)
                elif payload and payload.startswith(AVRO_MAGIC):
                    meta = CommitMetadata.from_avro_record(decode_avro_instant(payload, self.source))
                else:
                    meta = CommitMetadata.from_json_bytes(payload or b"", self.source)
            except (TypeError, ValueError, AttributeError) as e:
                raise CorruptTableError(f"archived commit {self.instant.requested_time} in {self.source} has "
                                        f"unreadable commit metadata: {e}") from e
            meta.require_paths_inside(self.source)
            self._commit = meta
        return self._commit

    def record(self) -> dict[str, Any]:
        """The Avro record of a completed clean, rollback or savepoint."""
        payload = self.payload
        if isinstance(payload, dict):
            return payload
        return decode_avro_instant(payload or b"", self.source)


class ArchivedTimeline:
    """The archived instants of a table (each in its latest archived state), oldest first."""

    def __init__(self, folder: str, entries: Iterable[_Entry]) -> None:
        self.folder = folder
        latest: dict[tuple[str, str], _Entry] = {}
        for e in entries:
            key = (e.instant.requested_time, action_family(e.instant.action))
            prev = latest.get(key)
            if prev is None or e.instant.state.rank >= prev.instant.state.rank:
                latest[key] = e
        self._entries = {(e.instant.requested_time, e.instant.action): e for e in latest.values()}
        self.instants: list[Instant] = sorted(
            (e.instant for e in latest.values()),
            key=lambda i: (i.requested_time, action_family(i.action), i.state.rank))

    @classmethod
    def load(cls, storage: Storage, layout: int, folder: str) -> ArchivedTimeline:
        files = _layout1_files(storage, folder) if layout == 1 else _layout2_files(storage, folder)
        return cls(folder, (e for entry in files for e in _parsed(storage, entry, layout)))

    def commits(self) -> list[Instant]:
        """Completed commit, deltacommit and replacecommit instants."""
        return [i for i in self.instants if i.is_completed and i.action in COMMIT_ACTIONS]

    def _entry(self, instant: Instant) -> _Entry:
        entry = self._entries.get((instant.requested_time, instant.action))
        if entry is None:
            raise InstantNotFoundError(f"instant {instant.requested_time} {instant.action} is not archived in "
                                       f"{self.folder}")
        return entry

    def commit_metadata(self, instant: Instant) -> CommitMetadata:
        return self._entry(instant).commit_metadata()

    def read_avro(self, instant: Instant) -> dict[str, Any]:
        return self._entry(instant).record()


# --- the combined timeline ---------------------------------------------------------------------------------


class _TimelineWithHistory(Timeline):
    """The active timeline preceded by the archived instants it no longer holds; metadata of an archived
    instant comes from the archive, of an active one from the active timeline (and its cache)."""

    def __init__(self, active: Timeline, archived: ArchivedTimeline) -> None:
        older = [i for i in archived.instants if active.find(i.requested_time) is None]
        super().__init__(active.storage, active.layout, active.folder, [*older, *active.instants],
                         active._files, active.archive_folder, active._stamps)
        self.active = active
        self.archived = archived
        self._archived_keys = {(i.requested_time, i.action) for i in older}

    def has_archived_instants(self) -> bool:
        return True

    def commit_metadata(self, instant: Instant, state: State | None = None) -> CommitMetadata:
        if (instant.requested_time, instant.action) in self._archived_keys:
            return self.archived.commit_metadata(instant)
        return self.active.commit_metadata(instant, state)

    def read_avro(self, instant: Instant, state: State | None = None,
                  reader_schema: Schema | None = None) -> dict[str, Any]:
        if (instant.requested_time, instant.action) in self._archived_keys:
            return self.archived.read_avro(instant)
        return self.active.read_avro(instant, state, reader_schema)


def with_history(timeline: Timeline) -> Timeline:
    """`timeline` with the archived instants before it: for queries that reach back before the active timeline.
    A table without archived instants gets `timeline` itself."""
    if isinstance(timeline, _TimelineWithHistory) or not timeline.has_archived_instants():
        return timeline
    return _TimelineWithHistory(timeline, ArchivedTimeline.load(timeline.storage, timeline.layout,
                                                                timeline.archive_folder))


# --- files and their cache ---------------------------------------------------------------------------------

_PARSED: OrderedDict[tuple[str, int, int | None], list[_Entry]] = OrderedDict()
_PARSED_MAX = 1024
_parsed_lock = threading.Lock()


def _parsed(storage: Storage, entry: FileEntry, layout: int) -> list[_Entry]:
    key = (storage.full(entry.path), entry.size, entry.mtime_ns)
    with _parsed_lock:
        known = _PARSED.get(key)
    if known is not None:
        return known
    entries = _layout1_entries(storage, entry.path) if layout == 1 else _layout2_entries(storage, entry.path)
    with _parsed_lock:
        _PARSED[key] = entries
        while len(_PARSED) > _PARSED_MAX:
            _PARSED.popitem(last=False)
    return entries


# --- layout 1 ----------------------------------------------------------------------------------------------


def _layout1_files(storage: Storage, folder: str) -> list[FileEntry]:
    files = []
    for e in storage.list(folder):
        lf = None if e.is_dir else parse_log_file(folder, e.name)
        if lf is not None and lf.file_id == ARCHIVE_FILE_ID:
            files.append((lf.version, e.name, e))
    return [e for _, _, e in sorted(files, key=lambda f: (f[0], f[1]))]


def read_archived(storage: Storage, folder: str = ".hoodie/archived") -> Iterator[dict[str, Any]]:
    """Every HoodieArchivedMetaEntry record of a layout-1 archive, oldest file first."""
    for entry in _layout1_files(storage, folder):
        yield from _archive_records(storage.read_bytes(entry.path), entry.path)


def _archive_records(data: bytes, path: str) -> Iterator[dict[str, Any]]:
    import fastavro  # only archives need it, and `import hudi_ds` does not pay for it (issue 32)

    for block in read_blocks(data, path):
        if block.block_type == BlockType.CORRUPT:
            raise CorruptTableError(f"archive file {path} has a truncated or corrupt block at byte {block.offset}; "
                                    "restore the file from a backup")
        if block.block_type != BlockType.AVRO_DATA:
            continue
        try:
            writer = fastavro.parse_schema(json.loads(block.schema_json or ""), named_schemas={})
            content = bytes(block.content)
            count, pos = _I.unpack_from(content, 4)[0], 8
            for _ in range(count):
                (size,) = _I.unpack_from(content, pos)
                rec = fastavro.schemaless_reader(io.BytesIO(content[pos + 4:pos + 4 + size]), writer)
                if not isinstance(rec, dict):
                    raise ValueError("a record is not an Avro record")
                yield rec
                pos += 4 + size
        except CorruptTableError:
            raise
        except Exception as e:  # struct, JSON and Avro errors of a garbled block
            raise CorruptTableError(f"archive file {path} has an unreadable block at byte {block.offset}: "
                                    f"{type(e).__name__}: {e}; restore the file from a backup") from e


def _layout1_entries(storage: Storage, path: str) -> list[_Entry]:
    out = []
    for rec in _archive_records(storage.read_bytes(path), path):
        ts, action, state = rec.get("commitTime"), rec.get("actionType"), rec.get("actionState") or "COMPLETED"
        if not isinstance(ts, str) or not _INSTANT_TIME.fullmatch(ts) or not isinstance(action, str) \
                or state not in State.__members__:
            raise CorruptTableError(f"archive file {path} has an entry with commitTime={ts!r}, actionType="
                                    f"{action!r}, actionState={state!r}; restore the file from a backup")
        inst = Instant(ts, action, State[state])
        payload = rec.get(_ENTRY_FIELD.get(action, "")) if inst.is_completed else None
        out.append(_Entry(inst, path, payload))
    return out


# --- layout 2 ----------------------------------------------------------------------------------------------


def read_manifest(storage: Storage, folder: str) -> tuple[int, list[dict[str, Any]]]:
    """(version, file entries) of the latest history snapshot; (0, []) for a history never written."""
    version = _latest_version(storage, folder)
    if version == 0:
        return 0, []
    path = posixpath.join(folder, f"{MANIFEST_PREFIX}{version}")
    try:
        doc = json.loads(storage.read_bytes(path).decode("utf-8") or "{}")
        files = doc.get("files") or []
        if not all(isinstance(f, dict) and isinstance(f.get("fileName"), str) for f in files):
            raise ValueError("every entry of 'files' needs a fileName")
    except FileNotFoundError:
        raise CorruptTableError(f"{posixpath.join(folder, VERSION_FILE)} names history version {version} but "
                                f"{path} is missing; restore it from a backup") from None
    except (UnicodeDecodeError, ValueError, AttributeError) as e:
        raise CorruptTableError(f"history manifest {path} is not a valid manifest: {e}; restore it from a "
                                "backup") from e
    return version, files


def _latest_version(storage: Storage, folder: str) -> int:
    """`_version_`, or (missing or unreadable, as Java falls back) the highest manifest version listed."""
    try:
        text = storage.read_bytes(posixpath.join(folder, VERSION_FILE)).decode("utf-8").strip()
        if text.isdigit():
            return int(text)
    except (FileNotFoundError, UnicodeDecodeError):
        pass
    versions = [int(e.name[len(MANIFEST_PREFIX):]) for e in storage.list(folder)
                if e.name.startswith(MANIFEST_PREFIX) and e.name[len(MANIFEST_PREFIX):].isdigit()]
    return max(versions, default=0)


def _layout2_files(storage: Storage, folder: str) -> list[FileEntry]:
    _, files = read_manifest(storage, folder)
    listed = {e.name: e for e in storage.list(folder)}
    out = []
    for f in files:
        name = f["fileName"]
        if parse_lsm_file_name(name) is None:
            raise CorruptTableError(f"the history manifest of {folder} names {name!r}, which is not a history file "
                                    "name (<min>_<max>_<level>.parquet); restore the manifest from a backup")
        if name not in listed:
            raise CorruptTableError(f"the history manifest of {folder} names {posixpath.join(folder, name)}, which "
                                    "is missing; restore it from a backup")
        out.append(listed[name])
    return sorted(out, key=lambda e: e.name)


_LSM_COLUMNS = ("instantTime", "completionTime", "action", "metadata")


def _layout2_entries(storage: Storage, path: str) -> list[_Entry]:
    import pyarrow.parquet as pq  # only the LSM history needs it: `import hudi_ds` does not pay for it (issue 32)

    try:
        table = pq.read_table(pa.BufferReader(storage.read_bytes(path)))
    except (pa.ArrowException, OSError) as e:
        raise CorruptTableError(f"history file {path} is not readable parquet: {e}; restore it from a backup") from e
    missing = [c for c in _LSM_COLUMNS if c not in table.column_names]
    if missing:
        raise CorruptTableError(f"history file {path} lacks the columns {missing} of HoodieLSMTimelineInstant; "
                                "restore it from a backup")
    out = []
    columns = [table.column(c).to_pylist() for c in _LSM_COLUMNS]
    for ts, completion, action, metadata in zip(*columns, strict=True):
        if not isinstance(ts, str) or not _INSTANT_TIME.fullmatch(ts) or not isinstance(action, str) or not (
                completion is None or (isinstance(completion, str) and _INSTANT_TIME.fullmatch(completion))):
            raise CorruptTableError(f"history file {path} has a row with instantTime={ts!r}, completionTime="
                                    f"{completion!r}, action={action!r}; restore it from a backup")
        out.append(_Entry(Instant(ts, action, State.COMPLETED, completion or ts), path, metadata))
    return out
