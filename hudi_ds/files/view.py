"""The file-system view: file groups and their latest file slices as of an instant.

A base file counts only if its instant is a completed commit visible to the query; a log file is
attached to the slice with the largest visible base instant not after it (v6: the log's base
instant; v8+: the completion time of the delta commit that wrote it, read from the archived timeline
when that commit was archived, as Hudi's CompletionTimeQueryView does; a log whose completion time is
unknown belongs to the latest slice). Replaced file groups (insert overwrite, clustering) disappear.
"""

from __future__ import annotations

import bisect
from collections import defaultdict
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field, replace

from hudi_ds.config import TableConfig
from hudi_ds.errors import CorruptTableError, MissingFileError
from hudi_ds.files.naming import BaseFile, LogFile, parse_base_file, parse_cdc_file, parse_log_file
from hudi_ds.storage import FileEntry, Storage
from hudi_ds.timeline import Timeline
from hudi_ds.timeline.archived import with_history

AFTER_ALL = "9" * 17  # sorts after every instant time: where a log of a pending (or unknown) commit belongs


@dataclass
class FileSlice:
    partition: str
    file_id: str
    base_instant: str | None
    base_file: BaseFile | None = None
    log_files: list[LogFile] = field(default_factory=list)
    cdc_files: list[LogFile] = field(default_factory=list)  # change data beside the slice; cleaned with it

    @property
    def files(self) -> list[str]:
        out = [self.base_file.path] if self.base_file else []
        return out + [lf.path for lf in self.log_files]

    @property
    def size(self) -> int:
        return (self.base_file.size if self.base_file else 0) + sum(lf.size for lf in self.log_files)


@dataclass(frozen=True)
class Visibility:
    """Which commits a query sees, and their order (completion order on v8+)."""

    committed: frozenset[str]
    rank: dict[str, int]
    completion: dict[str, str]
    earliest_active: str | None
    as_of: str | None
    uses_completion_time: bool
    archived: _ArchivedCompletionTimes | None = None

    def sees(self, instant: str | None) -> bool:
        """A file or block instant is visible: committed, or older than the timeline this visibility was built
        from (`earliest_active`). Archiving moves a prefix of the timeline that holds no pending write (a failed
        write is rolled back, its files deleted, before it can be archived), so what is older than that timeline
        was committed; a query reaching back past the active timeline reads the archived instants too
        (hudi_ds.timeline.archived.with_history), and this rule then only covers an archive trimmed by hand."""
        if instant is None:
            return False
        if instant in self.committed:
            return True
        return (
            self.earliest_active is not None
            and instant < self.earliest_active
            and (self.as_of is None or instant <= self.as_of)
        )

    def slice_time(self, log_instant: str) -> str:
        """Where a log file sorts against base instants (the slice it belongs to is the latest one whose base
        instant is not after this): v6 the log's instant; v8+ the completion time of the commit that wrote it,
        AFTER_ALL while it is pending (it completes after every base instant there is)."""
        if not self.uses_completion_time:
            return log_instant
        known = self.completion.get(log_instant)
        if known is None and self.archived is not None and self.sees(log_instant):
            known = self.archived.of(log_instant)
        return known or AFTER_ALL

    def order_key(self, instant: str) -> int:
        return self.rank.get(instant, -1)

    def with_pending(self, instant: str) -> Visibility:
        """What readers will see once `instant`, still being written, completes (as the latest commit): for a
        writer that derives the commit's change data before publishing it."""
        return replace(self, committed=self.committed | {instant}, rank={**self.rank, instant: len(self.rank)},
                       completion={**self.completion, instant: AFTER_ALL})

    @classmethod
    def of(cls, timeline: Timeline, as_of: str | None, layout: int) -> Visibility:
        commits = [i for i in timeline.commits() if as_of is None or i.requested_time <= as_of]
        completion = {i.requested_time: i.completion_time or i.requested_time for i in commits}
        ordered = sorted(commits, key=lambda i: (completion[i.requested_time], i.requested_time))
        rank = {inst.requested_time: n for n, inst in enumerate(ordered)}
        earliest = earliest_data_instant(timeline)
        return cls(
            committed=frozenset(rank),
            rank=rank,
            completion=completion,
            earliest_active=earliest if timeline.has_archived_instants() else None,
            as_of=as_of,
            uses_completion_time=layout >= 2,
            archived=_ArchivedCompletionTimes(timeline) if layout >= 2 and timeline.has_archived_instants() else None,
        )


class _ArchivedCompletionTimes:
    """Completion times of archived commits, read from the archived timeline on first need: a log file whose
    commit was archived can still be in a live file slice (archiving keeps the delta commits a compaction
    needs, but not beyond hoodie.compact.inline.max.delta.commits of them), and which slice it belongs to
    depends on when that commit completed."""

    def __init__(self, timeline: Timeline) -> None:
        self._timeline = timeline
        self._times: dict[str, str] | None = None

    def of(self, instant: str) -> str | None:
        if self._times is None:
            self._times = {i.requested_time: i.completion_time for i in with_history(self._timeline).commits()
                           if i.completion_time}
        return self._times.get(instant)


def earliest_data_instant(timeline: Timeline) -> str | None:
    """The earliest instant of the timeline that can own data files: a commit-like instant, or any pending one
    (a completed clean, rollback or indexing instant writes none, and may outlive archived commits)."""
    return min((i.requested_time for i in timeline.instants if i.is_commit_like or not i.is_completed),
               default=None)


def _attach_change_data(slices: list[FileSlice], files: list[LogFile]) -> None:
    """Each change-data file to the slice its name points at (the slice's base instant), so cleaning a slice
    removes its change data too."""
    by_instant = {sl.base_instant or (sl.log_files[0].instant if sl.log_files else ""): sl for sl in slices}
    for f in files:
        sl = by_instant.get(f.instant)
        if sl is not None:
            sl.cdc_files.append(f)


class FileSystemView:
    """File groups of a table, built from one listing of its partitions: a walk of storage, or `listing` given
    (the metadata table's, for readers: it holds no file of a pending or failed write, which writers that roll
    back or clean up must see)."""

    def __init__(
        self,
        storage: Storage,
        config: TableConfig,
        timeline: Timeline,
        visibility: Visibility,
        partition_filter: Callable[[str], bool] | None = None,
        listing: Iterable[FileEntry] | None = None,
    ) -> None:
        self.config = config
        self.visibility = visibility
        self.timeline = timeline
        self.replaced = self._replaced_file_groups(timeline, visibility)
        self.partition_filter = partition_filter
        self.partitions: list[str] = []
        self.groups: dict[tuple[str, str], list[FileSlice]] = {}
        self._build(storage.walk_files("") if listing is None else listing, partition_filter)

    @staticmethod
    def _replaced_file_groups(timeline: Timeline, vis: Visibility) -> set[tuple[str, str]]:
        replaced: set[tuple[str, str]] = set()
        for inst in timeline.commits():
            if inst.action == "replacecommit" and inst.requested_time in vis.committed:
                meta = timeline.commit_metadata(inst)
                for partition, file_ids in (meta.partition_to_replace_file_ids or {}).items():
                    replaced.update((partition, fid) for fid in file_ids)
        return replaced

    def _build(self, listing: Iterable[FileEntry], partition_filter: Callable[[str], bool] | None) -> None:
        bases: dict[tuple[str, str], list[BaseFile]] = defaultdict(list)
        logs: dict[tuple[str, str], list[LogFile]] = defaultdict(list)
        cdc: dict[tuple[str, str], list[LogFile]] = defaultdict(list)
        partitions: set[str] = set()
        for entry in listing:
            if entry.path.startswith(".hoodie/") or "/.hoodie/" in entry.path:
                continue
            partition, _, name = entry.path.rpartition("/")
            if partition_filter is not None and not partition_filter(partition):
                continue
            base = parse_base_file(partition, name, entry.size)
            if base is not None:
                partitions.add(partition)
                if self.visibility.sees(base.instant):
                    bases[(partition, base.file_id)].append(base)
                continue
            log = parse_log_file(partition, name, entry.size)
            if log is not None:
                partitions.add(partition)
                logs[(partition, log.file_id)].append(log)
                continue
            change_data = parse_cdc_file(partition, name, entry.size)
            if change_data is not None:
                cdc[(partition, change_data.file_id)].append(change_data)
        self.partitions = sorted(partitions)
        for key in set(bases) | set(logs):
            if key in self.replaced:
                continue
            slices = self._slices(key, sorted(bases.get(key, []), key=lambda b: b.instant), logs.get(key, []))
            _attach_change_data(slices, cdc.get(key, []))
            if slices:
                self.groups[key] = slices

    def _slices(self, key: tuple[str, str], bases: list[BaseFile], logs: list[LogFile]) -> list[FileSlice]:
        partition, file_id = key
        vis = self.visibility
        by_instant: dict[str, FileSlice] = {}
        for b in bases:  # several base files of one instant: keep one (retries write the same data)
            by_instant[b.instant] = FileSlice(partition, file_id, b.instant, b)
        base_instants = sorted(by_instant)
        for log in sorted(logs, key=LogFile.sort_key):
            if vis.uses_completion_time and not vis.sees(log.instant):
                continue
            if not vis.uses_completion_time and vis.as_of is not None and log.instant > vis.as_of:
                continue
            pos = bisect.bisect_right(base_instants, vis.slice_time(log.instant)) - 1
            if pos >= 0:
                by_instant[base_instants[pos]].log_files.append(log)
            else:  # log-only slice (Spark MOR bucket tables write inserts into logs)
                by_instant.setdefault("", FileSlice(partition, file_id, None)).log_files.append(log)
        return [by_instant[k] for k in sorted(by_instant)]

    def committed_paths(self) -> dict[str, str]:
        """Every data file the visible commits say they wrote (relative path -> commit instant)."""
        out: dict[str, str] = {}
        for inst in self.timeline.commits():
            if inst.requested_time in self.visibility.committed:
                for stat in self.timeline.commit_metadata(inst).write_stats():
                    for path in stat.all_paths():
                        out[path] = inst.requested_time
        return out

    def _recorded_sizes(self) -> dict[str, int]:
        """The size the visible commits recorded for each file they wrote (a log appended to by later commits
        only grows)."""
        out: dict[str, int] = {}
        for inst in self.timeline.commits():
            if inst.requested_time in self.visibility.committed:
                for stat in self.timeline.commit_metadata(inst).write_stats():
                    if stat.path:
                        out[stat.path] = max(out.get(stat.path, 0), stat.file_size_in_bytes)
        return out

    def check_committed_files(self, committed: dict[str, str]) -> None:
        """A base or log file a commit lists for a live file slice must exist (cleaning only removes
        slices that a newer base file superseded), at least as long as the commit recorded it."""
        latest = {key: slices[-1] for key, slices in self.groups.items()}
        sizes = self._recorded_sizes()
        for path, instant in committed.items():
            partition, _, name = path.rpartition("/")
            base = parse_base_file(partition, name)
            log = None if base is not None else parse_log_file(partition, name)
            ref = base or log
            if ref is None or (partition, ref.file_id) in self.replaced:
                continue
            if self.partition_filter is not None and not self.partition_filter(partition):
                continue
            sl = latest.get((partition, ref.file_id))
            if base is not None:
                present = sl is not None and sl.base_instant is not None and sl.base_instant >= base.instant
            else:
                assert log is not None
                if sl is None or (sl.base_instant or "") > log.instant:
                    continue  # a log of an older slice, superseded by compaction
                present = any(lf.name == name for lf in sl.log_files) or (
                    sl.base_instant is not None and sl.base_instant > instant)
            if not present:
                raise MissingFileError(
                    f"{path} is listed by commit {instant} but is missing from the table; restore the file, or roll "
                    f"back commit {instant} if it was the latest"
                )
            actual = _listed_size(sl, name)
            recorded = sizes.get(path, 0)
            if actual is not None and actual < recorded:
                raise CorruptTableError(
                    f"{path} has {actual} bytes but commit {instant} wrote {recorded}: the file was truncated; restore "
                    f"it, or roll back commit {instant} if it was the latest"
                )

    def latest_slices(self) -> list[FileSlice]:
        return [slices[-1] for _, slices in sorted(self.groups.items())]

    def slices_in(self, keys: Iterable[tuple[str, str]]) -> list[FileSlice]:
        return [self.groups[k][-1] for k in keys if k in self.groups]


def _listed_size(sl: FileSlice | None, name: str) -> int | None:
    """The listed size of a file of the slice, None when the slice does not hold it (an older slice's)."""
    if sl is None:
        return None
    if sl.base_file is not None and sl.base_file.name == name:
        return sl.base_file.size
    return next((lf.size for lf in sl.log_files if lf.name == name), None)
