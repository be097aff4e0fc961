"""A read plan's rows one file slice at a time, for engines that pull lazily (polars scans, Arrow record batch
readers): a slice without log files to merge reads only the row groups its statistics leave in
(hudi_ds.read.skipping), at most `ahead` slices are read or held at once, and the consumer stops the reading by
no longer asking (a `head(n)` stops after the slices it needed)."""

from __future__ import annotations

from collections import deque
from collections.abc import Generator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from itertools import islice
from typing import Any

import pyarrow as pa

from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.view import FileSlice
from hudi_ds.read import filters as flt
from hudi_ds.read.filters import Filter
from hudi_ds.read.query import ReadPlan, TableSnapshot, commits_between, plan_incremental, plan_snapshot
from hudi_ds.read.skipping import RowGroupFilter
from hudi_ds.read.splits import SlicePart
from hudi_ds.schema.meta import COMMIT_TIME


@dataclass(frozen=True)
class SliceStream:
    """The output of `plan` per file slice, in the plan's order."""

    plan: ReadPlan
    skipping: RowGroupFilter

    @classmethod
    def of(cls, plan: ReadPlan, filters: Sequence[Filter]) -> SliceStream:
        """The stream of a plan made with `filters` (normalized); an incremental plan also skips row groups
        written only by commits outside its range."""
        bounds = list(filters)
        if plan.commit_times is not None and len(plan.commit_times):
            times = plan.commit_times.to_pylist()
            bounds += [(COMMIT_TIME, ">=", min(times)), (COMMIT_TIME, "<=", max(times))]
        return cls(plan, RowGroupFilter.of(bounds, plan.schema))

    def read(self, sl: FileSlice) -> pa.Table:
        """The plan's rows of one slice, its base file's row groups skipped where the statistics allow."""
        merges = self.plan.include_logs and bool(sl.log_files)
        if merges or sl.base_file is None or not self.skipping:
            return self.plan.read_slice(sl)
        with open_base_file(self.plan.reader.storage, sl.base_file.path) as pf:
            metadata = pf.metadata
        groups = self.skipping.row_groups(metadata)
        if not groups:
            return self.plan.output_schema.empty_table()
        if len(groups) == metadata.num_row_groups:
            return self.plan.read_slice(sl)
        return self.plan.read_part(SlicePart(sl, tuple(groups)))

    def tables(self, ahead: int = 1) -> Generator[pa.Table, None, None]:
        """One table per slice. With `ahead` > 1 that many slices are read at once on threads, each yielded
        in turn; closing the iterator cancels the reads not started."""
        slices = iter(self.plan.slices)
        if ahead <= 1:
            for sl in slices:
                yield self.read(sl)
            return
        pool = ThreadPoolExecutor(ahead)
        try:
            running: deque[Future[pa.Table]] = deque(pool.submit(self.read, sl) for sl in islice(slices, ahead))
            while running:
                table = running.popleft().result()
                following = next(slices, None)
                if following is not None:
                    running.append(pool.submit(self.read, following))
                yield table
        finally:
            pool.shutdown(wait=True, cancel_futures=True)


def snapshot_stream(snap: TableSnapshot, as_of: str | None, filters: Sequence[Sequence[Any]],
                    columns: Sequence[str] | None, read_optimized: bool) -> SliceStream:
    """A snapshot, read-optimized or time-travel query (hudi_ds.read.query.plan_snapshot), lazily."""
    plan = plan_snapshot(snap, as_of, filters, columns, read_optimized)
    return SliceStream.of(plan, flt.normalize(filters, plan.schema))


def incremental_stream(snap: TableSnapshot, start: str, end: str | None, filters: Sequence[Sequence[Any]],
                       columns: Sequence[str] | None) -> SliceStream:
    """An incremental query (hudi_ds.read.query.plan_incremental), lazily."""
    plan = plan_incremental(snap, start, end, filters, columns)
    return SliceStream.of(plan, flt.normalize(filters, plan.schema))


def change_tables(snap: TableSnapshot, start: str, end: str | None,
                  filters: Sequence[Sequence[Any]]) -> Generator[pa.Table, None, None]:
    """The change feed of (start, end] one commit at a time; the file groups of partitions `filters` rule out
    are not read (the filters themselves are the caller's to apply)."""
    # imported here: snapshot reads need none of the change feed
    from hudi_ds.read.changes import change_schema, commit_changes, touched_groups

    schema = change_schema(snap)
    keep = flt.partition_pruner(snap.config, flt.normalize(filters, schema), schema)
    for ts in commits_between(snap, start, end):
        groups = touched_groups(snap, [ts])
        yield commit_changes(snap, ts, groups if keep is None else {g for g in groups if keep(g[0])})
