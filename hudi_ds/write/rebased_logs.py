"""Merge-on-read log files of a file group whose base file another task of the same write rewrote: they belong to
the new file slice.

With a lookup index, a task writes its updates of a file group as a log file of the slice the write was planned
against, while another task of the write may fill the group's small base file with new keys: it rewrites the base
file (the first task to claim the group, hudi_ds.write.task), and the new base file starts a new slice at this
instant, superseding the planned one. A version 6 log file names the base instant of its slice, so a log left
under the planned one would sit in a superseded slice and its updates would be lost. The coordinator moves such a
log file into the new slice (the same bytes under the new slice's name) and reports it there. Version 8+ log files
name their own instant and fall into the new slice by completion time: only their report changes.
"""

from __future__ import annotations

from dataclasses import replace

from hudi_ds.files.markers import write_marker
from hudi_ds.files.naming import join, log_file_name, parse_log_file
from hudi_ds.storage import Storage
from hudi_ds.write.messages import TaskResult, WrittenFile
from hudi_ds.write.plan import WritePlan


def rebase_logs(storage: Storage, plan: WritePlan, results: list[TaskResult]) -> list[TaskResult]:
    """The results with every log file of a group that got a new base file in this write moved into its slice."""
    if not plan.config.is_mor:
        return results
    rewritten = {(f.partition, f.file_id): f for r in results for f in r.files if not f.is_log}
    stale = [f for r in results for f in r.files
             if f.is_log and f.prev_commit != plan.instant and (f.partition, f.file_id) in rewritten]
    if not stale:
        return results
    moved = {f.path: _move(storage, plan, f, rewritten[(f.partition, f.file_id)]) for f in stale}
    return [replace(r, files=tuple(moved.get(f.path, f) for f in r.files)) for r in results]


def _move(storage: Storage, plan: WritePlan, log: WrittenFile, base: WrittenFile) -> WrittenFile:
    fmt = plan.config.format
    parsed = parse_log_file(log.partition, log.path.rsplit("/", 1)[-1])
    assert parsed is not None  # the write named it
    path = log.path
    version = 1  # the first log of the new slice (another task's of it has another write token)
    if fmt.log_instant(log.prev_commit, plan.instant) != plan.instant:  # v6: the name holds the slice's instant
        data = storage.read_bytes(log.path)
        while True:
            path = join(log.partition, log_file_name(log.file_id, plan.instant, version, parsed.write_token))
            write_marker(storage, plan.instant, path, fmt.log_marker)
            if storage.put_if_absent(path, data):
                break
            version += 1
        storage.delete(log.path)
    else:
        version = parsed.version
    return replace(log, path=path, prev_commit=plan.instant, base_file=base.path.rsplit("/", 1)[-1],
                   log_version=version)
