"""The metadata table's column_stats and partition_stats partitions, read as Hudi's readers read them.

Both partitions hold one HoodieMetadataColumnStats record per (file, column) — per (partition, column) for
partition_stats, whose `fileName` is the partition path — spread over several file groups
(`col-stats-0000-0`, `col-stats-0001-0`, ...; `partition-stats-0000-0`, ...). Each file group is a slice like
the files partition's: its latest base file, then the log files of the deltacommits completed after it whose
data instant completed too (hudi_ds.metadata.listing's rules), merged with HoodieMetadataPayload's rules.
"""

from __future__ import annotations

from collections import defaultdict

from hudi_ds.files.naming import parse_base_file, parse_log_file
from hudi_ds.metadata import records as md
from hudi_ds.metadata.layout import MetadataTable, is_init_instant
from hudi_ds.metadata.listing import MetadataSlice, merged_records
from hudi_ds.storage import require_inside
from hudi_ds.timeline import Timeline

# file name (column_stats) or partition path (partition_stats) -> column name -> statistics
StatsByFile = dict[str, dict[str, md.ColumnStats]]


def file_group_slices(mdt: MetadataTable, partition: str, mdt_timeline: Timeline,
                      data_timeline: Timeline) -> list[MetadataSlice]:
    """The latest slice of each file group of the metadata partition `partition`."""
    completion = {i.requested_time: i.completion_time or "" for i in mdt_timeline.completed()
                  if i.action in ("deltacommit", "commit")}
    bases: dict[str, list[tuple[str, str]]] = defaultdict(list)
    logs: dict[str, list[tuple[str, str, str]]] = defaultdict(list)
    for entry in mdt.storage.list(partition):
        if entry.is_dir:
            continue
        rel = require_inside(f"{partition}/{entry.name}", mdt.storage.full(partition))
        base = parse_base_file(partition, entry.name)
        log = parse_log_file(partition, entry.name)
        if base is not None and base.instant in completion:
            bases[base.file_id].append((base.instant, rel))
        elif log is not None and log.instant in completion and (
                is_init_instant(log.instant) or data_timeline.contains_completed(log.instant)):
            logs[log.file_id].append((completion[log.instant], log.instant, rel))
    out = []
    for file_id in sorted(set(bases) | set(logs)):
        base_instant, base_rel = max(bases[file_id]) if bases[file_id] else ("", None)
        after = sorted((c, i, r) for c, i, r in logs[file_id] if c > base_instant and i != base_instant)
        out.append(MetadataSlice(base_rel, base_instant, [(r, i) for _, i, r in after]))
    return out


def read_stats(mdt: MetadataTable, partition: str, data_timeline: Timeline) -> StatsByFile:
    """The live statistics of `partition` (COLUMN_STATS or PARTITION_STATS), by file (or partition) and column;
    deleted entries left out."""
    out: StatsByFile = defaultdict(dict)
    for sl in file_group_slices(mdt, partition, mdt.timeline(), data_timeline):
        for record in merged_records(mdt, sl).values():
            stats = md.column_stats(record)
            if not stats.is_deleted and stats.file_name is not None and stats.column_name is not None:
                out[stats.file_name][stats.column_name] = stats
    return dict(out)
