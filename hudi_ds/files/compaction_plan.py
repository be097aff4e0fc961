"""Compaction plans on the timeline: reading them, and what a pending plan means for writers.

A plan (`<C>.compaction.requested`, Avro HoodieCompactionPlan, spec §2.5) names, per file group, the slice
to compact: its base instant, base file and log files. From the moment the plan exists until `<C>.commit`
completes it, the compacted file groups have a new, still base-less file slice at instant C: writers append
their log files to it (`.<fileId>_<C>.log.<n>_<token>`), exactly as Apache Hudi does, so the compaction (which
only reads the previous slice) can never lose their updates. Readers merge the previous slice with the logs
of both slices until C completes; then the slice is C's base file plus those logs.

This module has no dependency on the write path, so the write coordinator can ask it where logs go.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_ds.files.naming import join
from hudi_ds.storage import require_inside
from hudi_ds.timeline import Instant, State, Timeline

PENDING_ACTION = "compaction"


@dataclass(frozen=True)
class CompactionOperation:
    """One file group of a plan: the slice (base instant, base file, log files) it compacts."""

    instant: str  # the compaction instant C
    partition: str
    file_id: str
    base_instant: str
    base_file: str | None  # file name, None for a log-only slice
    log_files: tuple[str, ...]  # file names
    metrics: dict[str, float]

    @property
    def key(self) -> tuple[str, str]:
        return (self.partition, self.file_id)

def pending_compactions(timeline: Timeline) -> list[Instant]:
    """Requested or inflight compaction instants, oldest first."""
    return [i for i in timeline.pending() if i.action == PENDING_ACTION]


def read_plan(timeline: Timeline, instant: Instant) -> list[CompactionOperation]:
    """The operations of a compaction plan (read from its requested file, whatever its state)."""
    record = timeline.read_avro(instant, State.REQUESTED)
    source = timeline.file_path(instant, State.REQUESTED)
    ops = []
    for op in record.get("operations") or []:
        if op is None:
            continue
        partition = require_inside(op.get("partitionPath") or "", source)
        ops.append(CompactionOperation(
            instant=instant.requested_time,
            partition=partition,
            file_id=op.get("fileId") or "",
            base_instant=op.get("baseInstantTime") or "",
            base_file=_name(op.get("dataFilePath"), partition, source),
            log_files=tuple(n for p in (op.get("deltaFilePaths") or []) if (n := _name(p, partition, source))),
            metrics=dict(op.get("metrics") or {}),
        ))
    return ops


def _name(path: str | None, partition: str, source: str) -> str | None:
    """Plan version 2 stores file names; older plans (version 1) stored full paths."""
    if not path:
        return None
    name = path.rsplit("/", 1)[-1]
    require_inside(join(partition, name), source)
    return name


def pending_operations(timeline: Timeline) -> dict[tuple[str, str], CompactionOperation]:
    """(partition, file id) -> the pending operation covering that file group."""
    out: dict[tuple[str, str], CompactionOperation] = {}
    for inst in pending_compactions(timeline):
        for op in read_plan(timeline, inst):
            out[op.key] = op
    return out


def log_targets(timeline: Timeline,
                known_commits: frozenset[str]) -> dict[tuple[str, str], tuple[str, str | None]]:
    """Where writers must put the logs of file groups a compaction covers: (partition, file id) ->
    (compaction instant C, relative path of C's base file or None while C is pending).

    Covers pending plans, and compactions that completed after `known_commits` (the commits the writer's
    file-system view already sees) were listed: their new slice is the latest one even if the view has not
    seen its base file yet.
    """
    out: dict[tuple[str, str], tuple[str, str | None]] = {}
    for key, op in pending_operations(timeline).items():
        out[key] = (op.instant, None)
    for inst in timeline.commits():
        if inst.action != "commit" or inst.requested_time in known_commits:
            continue
        meta = timeline.commit_metadata(inst)
        if not meta.compacted:
            continue
        for stat in meta.write_stats():
            key = (stat.partition_path or "", stat.file_id)
            current = out.get(key)
            if current is None or current[0] < inst.requested_time:
                out[key] = (inst.requested_time, stat.path)
    return out
