"""Instants: what one timeline file name says (time, action, state) and how instant times are made.

File names (spec §2.2). Layout 1 (table v6, `.hoodie/`): `<ts>.<action>` completed, `<ts>.<action>.requested`,
`<ts>.<action>.inflight`, except that an inflight `commit` is `<ts>.inflight`. Layout 2 (v8/v9,
`.hoodie/timeline/`): pending names are the same; a completed file is `<requested>_<completion>.<action>`.
Compaction, log compaction and clustering have their own pending action names but complete as `commit`,
`deltacommit` and `replacecommit`; layout 1 has no clustering name (Java plans clustering as `replacecommit`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import date, datetime, timedelta, timezone
from enum import Enum

from hudi_ds.errors import InvalidInstantError


class Action(str, Enum):
    """Timeline actions Hudi 0.14–1.1 write; Instant.action stays a str so unknown actions still parse."""

    COMMIT = "commit"
    DELTA_COMMIT = "deltacommit"
    REPLACE_COMMIT = "replacecommit"
    COMPACTION = "compaction"
    LOG_COMPACTION = "logcompaction"
    CLUSTERING = "clustering"
    CLEAN = "clean"
    ROLLBACK = "rollback"
    SAVEPOINT = "savepoint"
    RESTORE = "restore"
    INDEXING = "indexing"
    SCHEMA_COMMIT = "schemacommit"


# Actions whose completed instants add or replace data files (Java's "commits timeline").
COMMIT_ACTIONS: frozenset[str] = frozenset(
    {Action.COMMIT.value, Action.DELTA_COMMIT.value, Action.REPLACE_COMMIT.value})
# Pending-only actions and the action their completed file carries.
COMPLETED_ACTION_OF: dict[str, str] = {
    Action.COMPACTION.value: Action.COMMIT.value,
    Action.LOG_COMPACTION.value: Action.DELTA_COMMIT.value,
    Action.CLUSTERING.value: Action.REPLACE_COMMIT.value,
}
# Pending actions that will become commit-like once completed.
PENDING_COMMIT_ACTIONS: frozenset[str] = COMMIT_ACTIONS | frozenset(COMPLETED_ACTION_OF)


class State(Enum):
    REQUESTED = "requested"
    INFLIGHT = "inflight"
    COMPLETED = "completed"

    @property
    def rank(self) -> int:
        """Lifecycle order: requested < inflight < completed."""
        return _STATE_RANK[self]

    def __lt__(self, other: object) -> bool:
        if not isinstance(other, State):
            return NotImplemented
        return self.rank < other.rank


_STATE_RANK = {State.REQUESTED: 0, State.INFLIGHT: 1, State.COMPLETED: 2}


def action_family(action: str) -> str:
    """The completed action an instant ends as; files of one instant share it."""
    return COMPLETED_ACTION_OF.get(action, action)


@dataclass(frozen=True)
class Instant:
    """One instant of the timeline in its latest known state.

    Ordering follows Java: requested time compared as a string, then action, then lifecycle state.
    """

    requested_time: str
    action: str
    state: State
    completion_time: str | None = None  # only layout 2 file names carry it

    @property
    def is_completed(self) -> bool:
        return self.state is State.COMPLETED

    @property
    def is_commit_like(self) -> bool:
        """True for commit/deltacommit/replacecommit and their pending forms (compaction, clustering...)."""
        return self.action in PENDING_COMMIT_ACTIONS

    def _key(self) -> tuple[str, str, int, str]:
        return (self.requested_time, self.action, self.state.rank, self.completion_time or "")

    def __lt__(self, other: Instant) -> bool:
        return self._key() < other._key()

    def __le__(self, other: Instant) -> bool:
        return self._key() <= other._key()

    def __gt__(self, other: Instant) -> bool:
        return self._key() > other._key()

    def __ge__(self, other: Instant) -> bool:
        return self._key() >= other._key()

    def file_name(self, layout: int, state: State | None = None) -> str:
        """The timeline file name of this instant in `state` (default: its own state)."""
        return instant_file_name(self.requested_time, self.action, state or self.state, layout,
                                 self.completion_time)


def instant_file_name(requested_time: str, action: str, state: State, layout: int,
                      completion_time: str | None = None) -> str:
    """File name of one instant file; pending-only actions complete under their completed action."""
    _check_layout(layout)
    if state is State.COMPLETED:
        done = action_family(action)
        if layout == 1:
            return f"{requested_time}.{done}"
        if not completion_time:
            raise ValueError(f"a completed layout-2 instant needs a completion time: {requested_time}.{done}")
        return f"{requested_time}_{completion_time}.{done}"
    if layout == 1 and action == "clustering":
        action = "replacecommit"  # layout 1 plans clustering as a replacecommit
    if state is State.INFLIGHT and action == "commit":
        return f"{requested_time}.inflight"
    return f"{requested_time}.{action}.{state.value}"


_FILE_NAME = re.compile(r"(\d{14,})(?:_(\d{14,}))?\.([a-z]+)(?:\.([a-z]+))?")
_SUFFIX_STATES = {"requested": State.REQUESTED, "inflight": State.INFLIGHT}


def parse_instant_file_name(name: str, layout: int) -> Instant | None:
    """The instant a timeline file name stands for; None for anything else (properties, folders, temps)."""
    _check_layout(layout)
    m = _FILE_NAME.fullmatch(name)
    if m is None:
        return None
    ts, done, action, suffix = m.groups()
    if suffix is None:
        if action == "inflight":  # `<ts>.inflight` is an inflight commit
            return None if done else Instant(ts, "commit", State.INFLIGHT)
        if action == "requested":
            return None
        if layout == 1 and done:
            return None
        return Instant(ts, action, State.COMPLETED, done)
    state = _SUFFIX_STATES.get(suffix)
    if state is None or done or action in _SUFFIX_STATES:
        return None
    return Instant(ts, action, state)


def _check_layout(layout: int) -> None:
    if layout not in (1, 2):
        raise ValueError(f"unknown timeline layout version {layout!r}; expected 1 (table v6) or 2 (v8/v9)")


# ------------------------------------------------------------------------------------------------------------
# Instant times

_FMT = "%Y%m%d%H%M%S"
_ISO_SPACE = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?")


def datetime_to_instant(value: datetime | date | str) -> str:
    """A 17-digit UTC instant time (`yyyyMMddHHmmssSSS`) from a datetime or any accepted string form.

    Naive datetimes and strings without an offset are taken as UTC: tables we write keep the timeline in UTC.
    Digit strings of 14 or 17 digits pass through (14 gets `000` appended) without date validation, so special
    instants such as `00000000000000` stay usable as bounds; `"0"` means the start of time.
    """
    if isinstance(value, str):
        return _normalize_string(value)
    if not isinstance(value, date):
        raise InvalidInstantError(f"{value!r} is not an instant time; pass a string such as '20240101120000000' "
                                  "or '2024-01-01 12:00:00', or a datetime")
    if not isinstance(value, datetime):
        value = datetime(value.year, value.month, value.day)
    if value.tzinfo is not None:
        value = value.astimezone(timezone.utc)
    return value.strftime(_FMT) + f"{value.microsecond // 1000:03d}"


normalize_instant_time = datetime_to_instant


def instant_to_datetime(ts: str) -> datetime:
    """The UTC datetime an instant time (14/17 digits, ISO or `YYYY-MM-DD HH:MM:SS[.fff]`) stands for."""
    norm = _normalize_string(ts)
    try:
        dt = datetime.strptime(norm[:14], _FMT)
    except ValueError:
        raise InvalidInstantError(f"instant time {ts!r} is not a valid calendar time") from None
    return dt.replace(microsecond=int(norm[14:17]) * 1000, tzinfo=timezone.utc)


def _normalize_string(value: str) -> str:
    s = value.strip()
    if s.isdigit():
        if len(s) == 17:
            return s
        if len(s) == 14:
            return s + "000"
        if set(s) == {"0"}:
            return "0" * 17
        raise InvalidInstantError(
            f"instant time {value!r} must have 14 (yyyyMMddHHmmss) or 17 (yyyyMMddHHmmssSSS) digits")
    try:
        if len(s) == 10:
            return datetime_to_instant(date.fromisoformat(s))
        iso = s[:-1] + "+00:00" if s.endswith(("Z", "z")) else s
        if not _ISO_SPACE.match(iso):
            raise ValueError(iso)
        return datetime_to_instant(datetime.fromisoformat(iso))
    except ValueError:
        raise InvalidInstantError(
            f"cannot read {value!r} as an instant time; use yyyyMMddHHmmss[SSS], 'YYYY-MM-DD HH:MM:SS[.fff]' "
            "or an ISO-8601 timestamp") from None


def new_instant_time(after: str | None = None, now: datetime | None = None) -> str:
    """A fresh 17-digit UTC instant time, strictly greater than `after`.

    If the clock is not ahead of `after` (clock skew, two commits in one millisecond) the result is `after`
    plus one millisecond, so it stays a real timestamp that every reader parses.
    """
    current = now if now is not None else datetime.now(timezone.utc)
    candidate = datetime_to_instant(current)
    if after is None:
        return candidate
    floor = _normalize_string(after)
    if candidate > floor:
        return candidate
    try:
        base = datetime.strptime(floor[:14], _FMT).replace(microsecond=int(floor[14:17]) * 1000)
    except ValueError:
        raise ValueError(f"cannot generate an instant time after {after!r}: not a calendar time") from None
    return datetime_to_instant(base + timedelta(milliseconds=1))
