"""The active timeline of a table: one listing of the timeline folder, grouped into instants.

Layout 1 (v6) lives in `.hoodie/`, layout 2 (v8/v9) in `.hoodie/<hoodie.timeline.path>` (default `timeline`).
Archived instants (`.hoodie/archived/`, or the LSM history `.hoodie/timeline/history/`) are not read here: a
query that reaches past the active timeline reads them through hudi_ds.timeline.archived.with_history.
"""

from __future__ import annotations

import functools
import posixpath
import threading
from collections import OrderedDict
from collections.abc import Iterable
from typing import Any

from hudi_ds.errors import (
    CommitConflictError,
    CorruptTableError,
    InstantNotFoundError,
    MissingFileError,
    UnsupportedTableError,
)
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import HOODIE_DIR
from hudi_ds.timeline.avro_models import AVRO_MAGIC, decode_avro_instant, encode_avro_instant
from hudi_ds.timeline.avro_schemas import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    ROLLBACK_METADATA,
    ROLLBACK_PLAN,
    Schema,
)
from hudi_ds.timeline.commit_metadata import CommitMetadata
from hudi_ds.timeline.instant import (
    COMMIT_ACTIONS,
    PENDING_COMMIT_ACTIONS,
    Instant,
    State,
    action_family,
    instant_file_name,
    new_instant_time,
    parse_instant_file_name,
)

# Parsed metadata of completed instants, shared by every Timeline of this process: a completed instant file is
# never rewritten, and a long-lived reader (a stream, a notebook) would otherwise parse every commit again on
# each load. Keyed by full path, size and modification time, so a file re-created at the same path is re-read.
_COMPLETED_METADATA: OrderedDict[tuple[str, int, int | None], CommitMetadata] = OrderedDict()
_COMPLETED_METADATA_MAX = 8192
_completed_metadata_lock = threading.Lock()
# the same timeline file names come back on every load of a long-lived writer (a stream loads the timeline about
# ten times a micro-batch) or reader: each is parsed once per process (an Instant is immutable)
_parsed_file_name = functools.lru_cache(maxsize=16384)(parse_instant_file_name)

DEFAULT_TIMELINE_PATH = "timeline"  # hoodie.timeline.path (layout 2), relative to .hoodie/
DEFAULT_HISTORY_PATH = "history"  # hoodie.timeline.history.path, relative to the timeline folder
DEFAULT_ARCHIVE_PATH = "archived"  # hoodie.archivelog.folder (layout 1), relative to .hoodie/


def timeline_folder(layout: int, timeline_dir: str | None = None) -> str:
    """Folder of the active timeline, relative to the table base path.

    `timeline_dir` is a `hoodie.timeline.path` value (relative to `.hoodie/`) or a path starting with
    `.hoodie/`; it only applies to layout 2 (layout 1 always uses `.hoodie/`).
    """
    if layout == 1:
        return HOODIE_DIR
    if layout != 2:
        raise UnsupportedTableError(f"timeline layout version {layout} is not supported (expected 1 or 2)")
    return _under_hoodie(timeline_dir or DEFAULT_TIMELINE_PATH)


def _under_hoodie(value: str) -> str:
    value = value.strip("/")
    return value if value == HOODIE_DIR or value.startswith(HOODIE_DIR + "/") else f"{HOODIE_DIR}/{value}"


class Timeline:
    """Instants of the active timeline, each in its latest state, plus access to their files."""

    def __init__(self, storage: Storage, layout: int, folder: str, instants: Iterable[Instant],
                 files: dict[tuple[str, str], dict[State, str]], archive_folder: str,
                 stamps: dict[str, tuple[int, int | None]] | None = None) -> None:
        self.storage = storage
        self._stamps = stamps or {}  # listed file name -> (size, mtime_ns)
        self.layout = layout
        self.folder = folder
        self.archive_folder = archive_folder
        self._files = files
        self._metadata: dict[tuple[str, str, State | None], CommitMetadata] = {}
        self._records: dict[tuple[str, str], dict[str, Any]] = {}  # completed Avro instants, read once
        self.instants: list[Instant] = sorted(instants, key=self._instant_key)
        self._by_time: dict[str, Instant] = {}
        for inst in self.instants:  # the most advanced instant wins if two families share a time
            prev = self._by_time.get(inst.requested_time)
            if prev is None or inst.state.rank >= prev.state.rank:
                self._by_time[inst.requested_time] = inst

    @classmethod
    def load(cls, storage: Storage, layout: int, timeline_dir: str | None = None,
             archive_dir: str | None = None) -> Timeline:
        """List the timeline folder once and group its files by instant."""
        folder = timeline_folder(layout, timeline_dir)
        if layout == 1:
            archive = _under_hoodie(archive_dir or DEFAULT_ARCHIVE_PATH)
        else:
            archive = posixpath.join(folder, (archive_dir or DEFAULT_HISTORY_PATH).strip("/"))
        files: dict[tuple[str, str], dict[State, str]] = {}
        stamps: dict[str, tuple[int, int | None]] = {}
        latest: dict[tuple[str, str], Instant] = {}
        for entry in storage.list(folder):
            if entry.is_dir:
                continue
            name = entry.name
            inst = _parsed_file_name(name, layout)
            if inst is None:
                continue
            if inst.completion_time is not None and inst.completion_time < inst.requested_time:
                raise CorruptTableError(
                    f"timeline file {posixpath.join(folder, name)} says the instant completed before it was "
                    "requested (its completion time goes backwards): the file was renamed by hand or damaged; "
                    "restore it, or remove it if the instant never completed")
            key = (inst.requested_time, action_family(inst.action))
            files.setdefault(key, {})[inst.state] = name
            stamps[name] = (entry.size, entry.mtime_ns)
            prev = latest.get(key)
            if prev is None or inst.state.rank > prev.state.rank:
                latest[key] = inst
        return cls(storage, layout, folder, latest.values(), files, archive, stamps)

    @staticmethod
    def _instant_key(inst: Instant) -> tuple[str, str, int]:
        return (inst.requested_time, action_family(inst.action), inst.state.rank)

    # --- selections -----------------------------------------------------------------------------------------

    def completed(self) -> list[Instant]:
        return [i for i in self.instants if i.is_completed]

    def pending(self) -> list[Instant]:
        return [i for i in self.instants if not i.is_completed]

    def ordering_key(self, instant: Instant) -> tuple[Any, ...]:
        """Order of commits: requested time on layout 1; completion time on layout 2 (pending ones last)."""
        if self.layout == 1:
            return (instant.requested_time,)
        if instant.is_completed:
            return (0, instant.completion_time or instant.requested_time, instant.requested_time)
        return (1, instant.requested_time, "")

    def commits(self, include_pending: bool = False) -> list[Instant]:
        """Completed commit/deltacommit/replacecommit instants (and pending commit-like ones if asked)."""
        out = [i for i in self.instants if (i.is_completed and i.action in COMMIT_ACTIONS)
               or (include_pending and not i.is_completed and i.action in PENDING_COMMIT_ACTIONS)]
        return sorted(out, key=self.ordering_key)

    def last_completed_commit(self) -> Instant | None:
        commits = self.commits()
        return commits[-1] if commits else None

    def last_instant_time(self) -> str | None:
        """Greatest time on the timeline, requested or completion (any action or state): new instants must come
        after it (on layout 2 a new instant then sorts after every commit that completed before it began)."""
        return max((t for i in self.instants for t in (i.requested_time, i.completion_time) if t), default=None)

    def find(self, requested_time: str) -> Instant | None:
        return self._by_time.get(requested_time)

    def get(self, requested_time: str) -> Instant:
        inst = self.find(requested_time)
        if inst is None:
            raise InstantNotFoundError(
                f"instant {requested_time} is not on the active timeline in {self.folder}")
        return inst

    def contains_completed(self, ts: str) -> bool:
        inst = self.find(ts)
        return inst is not None and inst.is_completed

    def contains_or_before_start(self, ts: str) -> bool:
        """Java's containsOrBeforeTimelineStarts on completed commits: a log block of `ts` is visible."""
        commits = self.commits()
        if any(i.requested_time == ts for i in commits):
            return True
        return bool(commits) and ts < min(i.requested_time for i in commits)

    def completion_time_of(self, ts: str) -> str | None:
        """Completion time of a completed layout-2 instant (None when pending, unknown or layout 1)."""
        inst = self.find(ts)
        return inst.completion_time if inst is not None and inst.is_completed else None

    def has_archived_instants(self) -> bool:
        """Whether older instants were moved to the archived timeline (hudi_ds.timeline.archived reads them)."""
        for entry in self.storage.list(self.archive_folder):
            if entry.is_dir or entry.name.endswith(".crc"):
                continue
            if self.layout == 2 and entry.name.endswith(".parquet"):
                return True
            if self.layout == 1 and ".archive" in entry.name:
                return True
        return False

    # --- content --------------------------------------------------------------------------------------------

    def file_path(self, instant: Instant, state: State | None = None) -> str:
        """Path (relative to the base) of one file of `instant`: the listed name, else the canonical one."""
        state = state or instant.state
        listed = self._files.get((instant.requested_time, action_family(instant.action)), {}).get(state)
        name = listed or instant_file_name(instant.requested_time, instant.action, state, self.layout,
                                           instant.completion_time)
        return posixpath.join(self.folder, name)

    def read_content(self, instant: Instant, state: State | None = None) -> bytes:
        path = self.file_path(instant, state)
        try:
            return self.storage.read_bytes(path)
        except FileNotFoundError:
            raise MissingFileError(f"timeline file {path} is missing (was the instant archived or rolled "
                                    "back concurrently? reload the table and retry)") from None

    def commit_metadata(self, instant: Instant, state: State | None = None) -> CommitMetadata:
        """Commit metadata of a commit-like instant: JSON (v6) or Avro (v8/v9), told apart by magic."""
        key = (instant.requested_time, instant.action, state)
        if key not in self._metadata:  # one load of the timeline reads each instant file at most once
            path = self.file_path(instant, state)
            stamp = self._stamps.get(posixpath.basename(path))
            shared = None
            if (state or instant.state) == State.COMPLETED and stamp is not None:
                shared = (self.storage.full(path), *stamp)
                with _completed_metadata_lock:
                    known = _COMPLETED_METADATA.get(shared)
                if known is not None:
                    self._metadata[key] = known
                    return known
            data = self.read_content(instant, state)
            if data.startswith(AVRO_MAGIC):
                meta = CommitMetadata.from_avro_record(decode_avro_instant(data, path))
            else:
                meta = CommitMetadata.from_json_bytes(data, path)
            meta.require_paths_inside(path)
            self._metadata[key] = meta
            if shared is not None:
                with _completed_metadata_lock:
                    _COMPLETED_METADATA[shared] = meta
                    while len(_COMPLETED_METADATA) > _COMPLETED_METADATA_MAX:
                        _COMPLETED_METADATA.popitem(last=False)
        return self._metadata[key]

    def read_avro(self, instant: Instant, state: State | None = None,
                  reader_schema: Schema | None = None) -> dict[str, Any]:
        """The Avro record of a plan or metadata file (rollback, clean, compaction, replace...). A completed
        instant's file never changes: one load of the timeline reads it once."""
        key = (instant.requested_time, instant.action)
        cacheable = reader_schema is None and (state or instant.state) == State.COMPLETED
        if cacheable and key in self._records:
            return self._records[key]
        data = self.read_content(instant, state)
        record = decode_avro_instant(data, self.file_path(instant, state), reader_schema)
        if cacheable:
            self._records[key] = record
        return record

    def writer(self) -> TimelineWriter:
        """The writer of this timeline's folder."""
        return TimelineWriter(self.storage, self.layout, self.folder)

    def __repr__(self) -> str:
        return f"Timeline(layout={self.layout}, folder={self.folder!r}, instants={len(self.instants)})"


class TimelineWriter:
    """Creates and transitions instant files of a table's timeline (layout 1: v6; layout 2: v8/v9).

    Every create is put-if-absent: an instant file is never overwritten, so two writers that pick the same
    instant time cannot both own it, and a completed instant is never replaced. On layout 2 the completed file
    carries a completion time minted here, greater than every time on the timeline: callers complete instants
    under the commit lock, so completion times never go backwards.
    """

    def __init__(self, storage: Storage, layout: int = 1, folder: str | None = None) -> None:
        self.storage = storage
        self.layout = layout
        self.folder = folder or timeline_folder(layout)

    def path(self, instant_time: str, action: str, state: State, completion_time: str | None = None) -> str:
        return posixpath.join(self.folder, instant_file_name(instant_time, action, state, self.layout,
                                                             completion_time))

    def _listed(self) -> list[tuple[str, Instant]]:
        out = []
        for entry in self.storage.list(self.folder):
            name = entry.name
            inst = None if entry.is_dir else _parsed_file_name(name, self.layout)
            if inst is not None:
                out.append((name, inst))
        return out

    def create_requested(self, instant_time: str, action: str, content: bytes = b"") -> bool:
        """Claim `instant_time`: False if another writer already has an instant at that time (pick anew)."""
        path = self.path(instant_time, action, State.REQUESTED)
        if not self.storage.put_if_absent(path, content):
            return False
        # A writer of a different action at the same time creates a different file name; check after creating
        # so that of two racing writers at least the later one sees the other and backs off.
        mine = posixpath.basename(path)
        for name, other in self._listed():
            if name != mine and other.requested_time == instant_time:
                self.storage.delete(path)
                return False
        return True

    def transition_to_inflight(self, instant_time: str, action: str, content: bytes = b"") -> None:
        requested = self.path(instant_time, action, State.REQUESTED)
        if not self.storage.exists(requested):
            raise InstantNotFoundError(
                f"cannot mark {instant_time} {action} inflight: {requested} does not exist")
        inflight = self.path(instant_time, action, State.INFLIGHT)
        if not self.storage.put_if_absent(inflight, content):
            raise CommitConflictError(
                f"{inflight} already exists: another writer owns instant {instant_time}")

    def complete(self, instant_time: str, action: str, content: bytes) -> str | None:
        """Publish the completed file: the commit point. Raises CommitConflictError if it already exists.
        Returns the completion time (layout 2), None on layout 1."""
        inflight = self.path(instant_time, action, State.INFLIGHT)
        if not self.storage.exists(inflight):
            raise InstantNotFoundError(f"cannot complete {instant_time} {action}: {inflight} does not exist")
        completion = None
        if self.layout >= 2:
            listed = self._listed()
            family = action_family(action)
            if any(i.requested_time == instant_time and i.is_completed and action_family(i.action) == family
                   for _, i in listed):
                raise CommitConflictError(
                    f"instant {instant_time} {family} is already completed in {self.folder}; refusing to complete "
                    "it twice")
            latest = max((t for _, i in listed for t in (i.requested_time, i.completion_time) if t), default=None)
            completion = new_instant_time(after=latest)
        done = self.path(instant_time, action, State.COMPLETED, completion)
        if not self.storage.put_if_absent(done, content):
            raise CommitConflictError(f"{done} already exists; refusing to overwrite a completed instant")
        return completion

    def delete_instant_files(self, instant_time: str, action: str) -> None:
        """Remove every file of the instant, completed first: a crash midway leaves it pending."""
        family = action_family(action)
        names = {i.state: name for name, i in self._listed()
                 if i.requested_time == instant_time and action_family(i.action) == family}
        for state in (State.COMPLETED, State.INFLIGHT, State.REQUESTED):
            name = names.get(state)
            if name is not None:
                self.storage.delete(posixpath.join(self.folder, name))

    def write_avro_completed(self, instant_time: str, action: str, plan: dict[str, Any],
                             metadata: dict[str, Any]) -> None:
        """Write a whole rollback or clean instant: requested plan, inflight, completed metadata (all Avro).

        The clean inflight repeats the plan (as Hudi 0.14/0.15 do); the rollback inflight is empty.
        """
        schemas = _AVRO_ACTIONS.get(action)
        if schemas is None:
            raise ValueError(f"write_avro_completed handles {sorted(_AVRO_ACTIONS)}, not {action!r}")
        plan_bytes = encode_avro_instant(plan, schemas[0])
        if not self.create_requested(instant_time, action, plan_bytes):
            raise CommitConflictError(f"instant time {instant_time} is already taken; pick a new one")
        self.transition_to_inflight(instant_time, action, plan_bytes if action == "clean" else b"")
        self.complete(instant_time, action, encode_avro_instant(metadata, schemas[1]))


_AVRO_ACTIONS: dict[str, tuple[Schema, Schema]] = {
    "rollback": (ROLLBACK_PLAN, ROLLBACK_METADATA),
    "clean": (CLEANER_PLAN, CLEAN_METADATA),
}
