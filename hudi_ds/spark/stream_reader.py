"""Streaming source: polls the timeline and turns new commits into micro-batches.

Offset: `{"instant": <key>}`, the last consumed commit — its completion time on v8+ tables, its instant
time on v6 (the timeline's order). Each micro-batch reads the commits in (start, end]:
- the first batch of a stream started at `earliest` is the snapshot as of `end`;
- latest-state mode (default): the newest image of every record changed in the range (an incremental
  query per batch); deleted records are dropped — use the change feed to see deletes;
- change-feed mode (`hoodie.datasource.query.incremental.format=cdc`, or `changelog.enabled=true`):
  `_change_type` rows per commit and file group, with `_commit_time`; the hudi-py sink writes such rows
  back as upserts and deletes (`hoodie.datasource.write.changelog.column=_change_type`).
Splits are bounded (`hoodie.datasource.read.split.max.rows` / `.max.bytes`, see hudi_ds.read.splits), so no
single task stalls a micro-batch. Compaction, clustering, clean and rollback instants bring no rows.
A checkpoint older than the active timeline resumes over the archived commits (their metadata is read from the
archive). If cleaning removed file versions a batch needs (hudi_ds.read.retention; in change-feed mode checked on
the driver for each commit, hudi_ds.read.changes.require_readable), the query fails
naming `clean.retain_commits` — or, with `hoodie.datasource.read.incr.fallback.fulltablescan.enable=true`, that
batch reads the rows of the latest snapshot written by its commits (Hudi's full table scan fallback; in
change-feed mode as `insert` rows).
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterator, Sequence
from typing import Any

import pyarrow as pa
from pyspark.sql.datasource import DataSourceStreamReader, InputPartition

from hudi_ds.config.options import HudiOptions
from hudi_ds.errors import CleanedInstantsError
from hudi_ds.read import changes as feed
from hudi_ds.read import query
from hudi_ds.read.splits import pack
from hudi_ds.schema.meta import COMMIT_TIME
from hudi_ds.schema.strings import constant_strings
from hudi_ds.spark import types
from hudi_ds.spark.batch_reader import instant_option, load_snapshot
from hudi_ds.storage import Storage

try:  # admission control and Trigger.AvailableNow arrived in pyspark 4.2
    from pyspark.sql.streaming.datasource import (
        ReadAllAvailable,
        ReadMaxFiles,
        ReadMaxRows,
        SupportsTriggerAvailableNow,
    )

    ADMISSION_CONTROL = True
except ImportError:  # pragma: no cover - pyspark < 4.2: one batch per trigger
    ADMISSION_CONTROL = False
    SupportsTriggerAvailableNow = object  # type: ignore[assignment,misc]


class _Split(InputPartition):
    """Slice parts of a read plan (kind "parts"), or the change feed of one commit over some file groups."""

    def __init__(self, index: int, storage: Storage, kind: str, args: tuple[Any, ...]) -> None:
        super().__init__(index)
        self.storage, self.kind, self.args = storage, kind, args

    def tables(self) -> Iterator[pa.Table]:
        if self.kind == "parts":
            plan, parts = self.args
            for part in parts:
                yield plan.read_part(part)
            return
        snap = load_snapshot(self.storage)
        commit, groups = self.args
        yield feed.commit_changes(snap, commit, set(groups))


def _key(snap: query.TableSnapshot, inst: Any) -> str:
    if snap.config.layout_version >= 2 and inst.completion_time:
        return str(inst.completion_time)
    return str(inst.requested_time)


class HudiStreamReader(DataSourceStreamReader, SupportsTriggerAvailableNow):  # type: ignore[misc]
    """One long-lived object on the driver; offsets are small dicts stored in Spark's checkpoint."""

    def __init__(self, opts: HudiOptions, storage: Storage, cdc: bool, target: pa.Schema) -> None:
        self.opts, self.storage, self.cdc = opts, storage, cdc
        self.target = target  # the schema Spark was given when the stream started
        self.stop_at: dict[str, str] | None = None  # Trigger.AvailableNow: stop at this offset

    # ---- offsets -------------------------------------------------------------------------------------
    def _commits(self, snap: query.TableSnapshot) -> list[tuple[str, Any]]:
        """(ordering key, instant) of data commits, in timeline order."""
        out = [(_key(snap, c), c) for c in snap.timeline.commits()]
        return sorted(out, key=lambda kc: kc[0])

    def initialOffset(self) -> dict[str, str]:  # noqa: N802 - Spark's API names
        start = (self.opts.begin_instant or "earliest").strip().lower()
        if start == "earliest":
            return {"instant": "0"}
        snap = load_snapshot(self.storage, self.opts.metadata_enable is not False)
        if start == "latest":
            commits = self._commits(snap)
            return {"instant": commits[-1][0] if commits else "0"}
        at = instant_option(start, "read.start-commit")
        commits = self._commits(snap.reaching(at))
        # an instant time names the first commit to read: the offset is the key just before it
        earlier = [k for k, c in commits if c.requested_time < (at or "0")]
        return {"instant": earlier[-1] if earlier else "0"}

    def _limited(self, snap: query.TableSnapshot, start: str, limit: Any) -> str:
        snap = snap.reaching(start)
        commits = [(k, c) for k, c in self._commits(snap) if k > start]
        end = instant_option(self.opts.end_instant, "read.end-commit") if self.opts.end_instant else None
        if end:
            commits = [(k, c) for k, c in commits if c.requested_time <= end]
        if self.stop_at is not None:
            commits = [(k, c) for k, c in commits if k <= self.stop_at["instant"]]
        if not commits:
            return start
        max_instants = self.opts.stream_max_instants or len(commits)
        rows = files = 0
        chosen = start
        for n, (k, c) in enumerate(commits):
            meta = snap.timeline.commit_metadata(c)
            stats = meta.write_stats()
            rows += sum(s.num_writes + s.num_deletes for s in stats)
            files += len(stats)
            if n > 0 and (n >= max_instants or _over(limit, rows, files)):
                break
            chosen = k
        return chosen

    def latestOffset(self, start: dict[str, str] | None = None, limit: Any = None) -> dict[str, str]:  # noqa: N802
        snap = load_snapshot(self.storage, self.opts.metadata_enable is not False)
        begin = (start or {}).get("instant", "0")
        return {"instant": self._limited(snap, begin, limit)}

    def getDefaultReadLimit(self) -> Any:  # noqa: N802
        if self.opts.stream_max_rows:
            return ReadMaxRows(self.opts.stream_max_rows)
        if self.opts.stream_max_files:
            return ReadMaxFiles(self.opts.stream_max_files)
        return ReadAllAvailable()

    def prepareForTriggerAvailableNow(self) -> None:  # noqa: N802
        snap = load_snapshot(self.storage, self.opts.metadata_enable is not False)
        commits = self._commits(snap)
        self.stop_at = {"instant": commits[-1][0] if commits else "0"}

    # ---- splits --------------------------------------------------------------------------------------
    def partitions(self, start: dict[str, str], end: dict[str, str]) -> Sequence[InputPartition]:
        begin, finish = start.get("instant", "0"), end.get("instant", "0")
        snap = load_snapshot(self.storage, self.opts.metadata_enable is not False).reaching(begin)
        keys = {k: c.requested_time for k, c in self._commits(snap)}
        in_range = [ts for k, ts in sorted(keys.items()) if begin < k <= finish]
        if not in_range:
            return []
        try:
            return self._splits(snap, begin, finish, in_range)
        except CleanedInstantsError as exc:
            if not self.opts.incr_fallback_full_scan:
                raise CleanedInstantsError(
                    f"the streaming read resumes after commit {begin}: {exc}; or set "
                    "hoodie.datasource.read.incr.fallback.fulltablescan.enable=true to read the batch from the "
                    "latest snapshot") from exc
        plan = query.plan_snapshot(snap)  # the rows of the latest snapshot the batch's commits wrote
        return self._plan_splits(dataclasses.replace(plan, commit_times=pa.array(in_range, pa.string())))

    def _splits(self, snap: query.TableSnapshot, begin: str, finish: str, in_range: list[str]) -> list[InputPartition]:
        if begin == "0" and not self.cdc:
            return self._plan_splits(query.plan_snapshot(snap, as_of=in_range[-1]))
        if self.cdc:
            splits: list[InputPartition] = []
            for ts in in_range:
                feed.require_readable(snap, ts)  # fail (or fall back) here, not in a task
                groups = sorted(feed.touched_groups(snap, [ts]))
                for chunk in (groups[i::self._parallelism()] for i in range(min(len(groups), self._parallelism()))):
                    splits.append(_Split(len(splits), self.storage, "cdc", (ts, chunk)))
            return splits
        return self._plan_splits(query.plan_incremental(snap, begin, finish))

    def _parallelism(self) -> int:
        return self.opts.min_partitions or (os.cpu_count() or 2)

    def _plan_splits(self, plan: query.ReadPlan) -> list[InputPartition]:
        """Bounded parts of the plan's slices, small ones packed together (see hudi_ds.read.splits)."""
        opts = self.opts
        parts = plan.split(opts.split_max_bytes, opts.split_max_rows)
        lean = dataclasses.replace(plan, slices=[])  # each task carries its own parts only
        bins = pack(parts, opts.split_max_bytes, opts.split_open_cost, self._parallelism())
        return [_Split(i, self.storage, "parts", (lean, tuple(b))) for i, b in enumerate(bins)]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _Split)
        for table in partition.tables():
            if self.cdc and partition.kind == "parts":  # a fallback batch of the change feed: current rows
                table = table.append_column(feed.CHANGE_TYPE, constant_strings("insert", table.num_rows)) \
                    .append_column(feed.CHANGE_COMMIT_TIME, table[COMMIT_TIME])
            if table.num_rows:
                yield from types.batches(table, self.target)

    def commit(self, end: dict[str, str]) -> None:
        """Nothing to release: splits hold no resources between batches."""


def stream_schema(snap: query.TableSnapshot, cdc: bool) -> pa.Schema:
    return feed.change_schema(snap) if cdc else snap.full_schema()


def _over(limit: Any, rows: int, files: int) -> bool:
    if not ADMISSION_CONTROL or limit is None:
        return False
    if isinstance(limit, ReadMaxRows):
        return rows > limit.max_rows
    if isinstance(limit, ReadMaxFiles):
        return files > limit.max_files
    return False


__all__ = ["ADMISSION_CONTROL", "HudiStreamReader", "stream_schema"]
