"""A table's active timeline in the other layout: the files a version change writes, computed whole in memory
before anything is written (an instant file that cannot be parsed stops the change with nothing written).

Layout 1 -> 2 (Hudi's SevenToEightUpgradeHandler): every instant file of `.hoodie/` moves into the timeline
folder; a completed one is renamed `<requested>_<completion>.<action>` with the modification time of its file as
completion time (in the table's timeline timezone, never before the requested time); commit, delta commit and
replace commit metadata (inflight and completed) becomes Avro; a pending replacecommit becomes `clustering`
(the only pending replacecommit left once failed writes are rolled back is a clustering plan); every other file
(plans, clean and rollback metadata) is Avro already and moves unchanged.
Layout 2 -> 1 (EightToSixDowngradeHandler): the reverse, commit metadata back to JSON; the completion times are
dropped (layout 1 orders instants by their requested time). The instants of the LSM history come back as
completed instant files (Hudi writes them into the version 6 archive instead; hudi_ds's next archiving does).
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from datetime import datetime, timezone

import pyarrow as pa
import pyarrow.parquet as pq

from hudi_ds.errors import CorruptTableError
from hudi_ds.storage import FileEntry, Storage
from hudi_ds.table_format import TableFormat
from hudi_ds.timeline import (
    CommitMetadata,
    Instant,
    State,
    datetime_to_instant,
    instant_file_name,
    parse_instant_file_name,
)
from hudi_ds.timeline.archived import read_manifest
from hudi_ds.timeline.avro_models import AVRO_MAGIC, decode_avro_instant
from hudi_ds.timeline.instant import COMMIT_ACTIONS, action_family

_PENDING_RENAMES = {1: {"replacecommit": "clustering"}, 2: {"clustering": "replacecommit"}}


@dataclass(frozen=True)
class MovedFile:
    """One instant file in the new layout, and the file of the old layout it comes from."""

    source: str  # relative to the table base path
    target: str
    content: bytes
    instant: Instant  # as the new layout names it (with its completion time on layout 2)


def listed_instants(storage: Storage, fmt: TableFormat) -> list[tuple[FileEntry, Instant]]:
    """The instant files of the table's timeline folder (any action, any state), oldest first."""
    out = []
    for entry in storage.list(fmt.timeline_dir):
        inst = None if entry.is_dir else parse_instant_file_name(entry.name, fmt.layout)
        if inst is not None:
            out.append((entry, inst))
    return sorted(out, key=lambda e: (e[1].requested_time, action_family(e[1].action), e[1].state.rank))


def moved_timeline(storage: Storage, old: TableFormat, new: TableFormat,
                   timeline_timezone: str | None) -> list[MovedFile]:
    """Every instant file of the table's timeline as `new` lays it out. Completion times (layout 2) come from the
    modification times in `timeline_timezone`; without one, they are the requested times."""
    out = []
    for entry, inst in listed_instants(storage, old):
        data = storage.read_bytes(entry.path)
        action = inst.action if inst.is_completed else _PENDING_RENAMES[old.layout].get(inst.action, inst.action)
        completion = None
        if new.layout == 2 and inst.is_completed:
            mtime = entry.mtime_ns if timeline_timezone is not None else None
            completion = completion_time(mtime, inst.requested_time, timeline_timezone or "UTC")
        moved = Instant(inst.requested_time, action, inst.state, completion)
        name = instant_file_name(moved.requested_time, action, moved.state, new.layout, completion)
        out.append(MovedFile(entry.path, posixpath.join(new.timeline_dir, name),
                             _content(data, entry.path, inst, new), moved))
    return out


def restored_history(storage: Storage, old: TableFormat, new: TableFormat) -> list[MovedFile]:
    """The instants of the LSM history (layout 2) as completed instant files of layout 1: a downgrade returns them
    to the active timeline, which the next archiving of the version 6 table moves into its archive. A history row
    holds the completed file's content (Avro commit metadata, or JSON in tables Java upgraded)."""
    out = []
    for f in read_manifest(storage, old.archive_dir)[1]:
        path = posixpath.join(old.archive_dir, f["fileName"])
        try:
            table = pq.read_table(pa.BufferReader(storage.read_bytes(path)),
                                  columns=["instantTime", "action", "metadata"])
        except (pa.ArrowException, OSError, KeyError) as e:
            raise CorruptTableError(f"history file {path} is not readable: {e}; restore it from a backup") from e
        for ts, action, metadata in zip(*(table.column(c).to_pylist() for c in table.column_names), strict=True):
            name = instant_file_name(str(ts), str(action), State.COMPLETED, new.layout) if ts and action else ""
            inst = parse_instant_file_name(name, new.layout)
            if inst is None or (inst.requested_time, inst.action) != (ts, action):
                raise CorruptTableError(f"history file {path} has a row with instantTime={ts!r}, action={action!r}; "
                                        "restore it from a backup")
            out.append(MovedFile(path, posixpath.join(new.timeline_dir, name),
                                 _content(metadata or b"", path, inst, new), inst))
    return out


def completion_time(mtime_ns: int | None, requested_time: str, timeline_timezone: str) -> str:
    """The completion time Hudi gives a layout-1 instant: its completed file's modification time, as an instant
    time in the table's timezone (UTC, or the machine's for LOCAL); never before the instant's own time (a clock
    that went back, a store that keeps whole seconds)."""
    if mtime_ns is None:
        return requested_time
    moment = datetime.fromtimestamp(mtime_ns / 1e9, timezone.utc)
    if timeline_timezone.upper() != "UTC":
        moment = moment.astimezone().replace(tzinfo=None)
    return max(datetime_to_instant(moment), requested_time)


def _content(data: bytes, path: str, inst: Instant, new: TableFormat) -> bytes:
    """The file's content in the new layout: commit metadata in the new layout's codec, the rest unchanged."""
    replace = inst.action == "replacecommit"
    commit_like = inst.action in COMMIT_ACTIONS and (inst.is_completed or not replace)
    if not commit_like or not data.strip():
        return data
    if data.startswith(AVRO_MAGIC):
        meta = CommitMetadata.from_avro_record(decode_avro_instant(data, path))
    else:
        meta = CommitMetadata.from_json_bytes(data, path)
    if replace and meta.partition_to_replace_file_ids is None:
        meta.partition_to_replace_file_ids = {}
    return new.encode_commit_metadata(meta, inst.action)


def key_of(inst: Instant) -> tuple[str, str, State]:
    """How an instant file is matched with its copy in the other layout (a completed file's name differs)."""
    return inst.requested_time, action_family(inst.action), inst.state


__all__ = ["MovedFile", "completion_time", "key_of", "listed_instants", "moved_timeline", "restored_history"]
