"""Where the inserts of a write with a lookup index (SIMPLE, BLOOM, GLOBAL_*) go: small files first, then new file
groups (Apache Hudi's UpsertPartitioner).

A base file smaller than `hoodie.parquet.small.file.limit` takes as many new records as fit below
`hoodie.parquet.max.file.size` at the average record size (on merge-on-read only the smallest
`hoodie.merge.small.file.group.candidates.limit` of a partition: hudi_ds.write.commit); the rest go to new file groups of
`hoodie.parquet.max.file.size / record size` records each (`hoodie.copyonwrite.insert.split.size` when
`hoodie.copyonwrite.insert.auto.split` is false), spread evenly. The average record size is that of the latest
commit that wrote more than `hoodie.record.size.estimation.threshold` x the small file limit, else
`hoodie.copyonwrite.record.size.estimate`.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from hudi_ds.config.options import HudiOptions
from hudi_ds.timeline import Timeline


@dataclass(frozen=True)
class InsertSizing:
    small_file_limit: int  # bytes; <= 0: no small-file filling
    max_file_size: int  # bytes
    record_size: int  # average bytes per record
    records_per_group: int  # records per new file group

    @classmethod
    def of(cls, options: HudiOptions, timeline: Timeline) -> InsertSizing:
        size = average_record_size(timeline, options)
        per_group = options.max_file_size // size if options.auto_split_inserts else options.insert_split_size
        return cls(options.small_file_limit, options.max_file_size, size, max(1, per_group))


def average_record_size(timeline: Timeline, options: HudiOptions) -> int:
    """Bytes per record of the base files of the latest commit that wrote enough to tell (see the module doc)."""
    threshold = options.record_size_threshold * options.small_file_limit
    for inst in reversed([c for c in timeline.commits() if c.is_completed]):
        stats = [s for s in timeline.commit_metadata(inst).write_stats() if not s.is_log]
        written = sum(s.total_write_bytes for s in stats)
        records = sum(s.num_writes for s in stats)
        if written > threshold and records > 0:
            return max(1, math.ceil(written / records))
    return options.record_size_estimate


def place_inserts(count: int, small_files: Sequence[tuple[int, int]], first_new_slot: int,
                  sizing: InsertSizing, claim: Callable[[int], bool] = lambda slot: True) -> list[tuple[int, int]]:
    """(slot, records) for `count` inserts of one partition: into the small files ((slot, bytes), in order) while
    they have room, then into new file groups numbered from `first_new_slot`. A small file with room is filled only
    if `claim(slot)`: one task of a write fills it, as Apache Hudi gives each small file to one task."""
    placed: list[tuple[int, int]] = []
    left = count
    if sizing.small_file_limit > 0:
        for slot, size in small_files:
            if left == 0:
                break
            room = min((sizing.max_file_size - size) // sizing.record_size, left)
            if room > 0 and claim(slot):
                placed.append((slot, room))
                left -= room
    if left:
        groups = math.ceil(left / sizing.records_per_group)
        share, extra = divmod(left, groups)
        placed += [(first_new_slot + i, share + (1 if i < extra else 0)) for i in range(groups)]
    return placed


@dataclass(frozen=True)
class InsertPlacement:
    """Where a write places inserts: `sizing`, and the small files of each partition at begin()."""

    sizing: InsertSizing
    small_files: dict[str, tuple[tuple[int, int], ...]]  # partition -> (slot, base file bytes) of its small files

    def place(self, partition: str, count: int, first_new_slot: int, fill: bool = True,
              claim: Callable[[int], bool] = lambda slot: True) -> list[tuple[int, int]]:
        """(slot, records) for `count` inserts of `partition`; `fill` False leaves the small files alone (an
        overwrite replaces them); `claim` as for place_inserts."""
        small = self.small_files.get(partition, ()) if fill else ()
        return place_inserts(count, small, first_new_slot, self.sizing, claim)
