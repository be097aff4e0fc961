"""The change feed as a batch query: hoodie.datasource.query.type=incremental with the cdc format
(or changelog.enabled=true): per commit in (begin, end], its file groups dealt into as many splits as the
machine has cores (or hoodie.datasource.read.min.partitions): a split reads all its groups' change data in one
pass, and Spark does not pay a task per file group."""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence

import pyarrow as pa
from pyspark.sql.datasource import DataSourceReader, InputPartition
from pyspark.sql.types import StructType

from hudi_ds.config.options import HudiOptions
from hudi_ds.read import changes as feed
from hudi_ds.read import query
from hudi_ds.spark import types
from hudi_ds.spark.batch_reader import instant_option, load_snapshot
from hudi_ds.storage import Storage


class _CommitGroups(InputPartition):
    def __init__(self, index: int, commit: str, groups: tuple[tuple[str, str], ...]) -> None:
        super().__init__(index)
        self.commit, self.groups = commit, groups


class ChangeFeedReader(DataSourceReader):
    def __init__(self, opts: HudiOptions, storage: Storage, schema: StructType) -> None:
        self.storage = storage
        self.start = instant_option(opts.begin_instant, "hoodie.datasource.read.begin.instanttime") or "0"
        self.end = instant_option(opts.end_instant, "hoodie.datasource.read.end.instanttime")
        self.target = types.arrow_schema(schema)
        self.parallelism = opts.min_partitions or os.cpu_count() or 2

    def partitions(self) -> Sequence[InputPartition]:
        snap = load_snapshot(self.storage).reaching(self.start)  # archived commits included
        splits: list[InputPartition] = []
        for ts in query.commits_between(snap, self.start, self.end):
            feed.require_readable(snap, ts)  # a cleaned commit fails here, not in a task
            groups = sorted(feed.touched_groups(snap, [ts]))
            for i in range(min(len(groups), self.parallelism)):
                splits.append(_CommitGroups(len(splits), ts, tuple(groups[i::self.parallelism])))
        return splits or [_CommitGroups(0, "", ())]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _CommitGroups)
        if not partition.commit:
            return
        snap = load_snapshot(self.storage)
        yield from types.batches(feed.commit_changes(snap, partition.commit, set(partition.groups)), self.target)
