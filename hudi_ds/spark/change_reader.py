"""The change feed as a batch query: hoodie.datasource.query.type=incremental with the cdc format
(or changelog.enabled=true): one split per (commit, file group) of the commits in (begin, end]."""

from __future__ import annotations

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


class _CommitGroup(InputPartition):
    def __init__(self, index: int, commit: str, group: tuple[str, str]) -> None:
        super().__init__(index)
        self.commit, self.group = commit, group


class ChangeFeedReader(DataSourceReader):
    def __init__(self, opts: HudiOptions, storage: Storage, schema: StructType) -> None:
        self.storage = storage
        self.start = instant_option(opts.begin_instant, "hoodie.datasource.read.begin.instanttime") or "0"
        self.end = instant_option(opts.end_instant, "hoodie.datasource.read.end.instanttime")
        self.target = types.arrow_schema(schema)

    def partitions(self) -> Sequence[InputPartition]:
        snap = load_snapshot(self.storage)
        splits: list[InputPartition] = []
        for ts in query.commits_between(snap, self.start, self.end):
            for group in sorted(feed.touched_groups(snap, [ts])):
                splits.append(_CommitGroup(len(splits), ts, group))
        return splits or [_CommitGroup(0, "", ("", ""))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        assert isinstance(partition, _CommitGroup)
        if not partition.commit:
            return
        snap = load_snapshot(self.storage)
        yield from types.batches(feed.commit_changes(snap, partition.commit, {partition.group}), self.target)
