"""The table services that run after each commit, as the options say: the same for HudiTable.write, Spark
batch writes and the streaming sink.

A compaction is scheduled every `compaction.delta_commits` delta commits and executed inline, or handed to one
background runner per table and process (`compaction.async.enabled`; writes go on, their logs land in the new
file slices); then the table is cleaned (by the cleaning policy of the options) and archived.
"""

from __future__ import annotations

import threading

from hudi_ds import faults
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig
from hudi_ds.services import archive, clean, compaction
from hudi_ds.services.compaction import CompactionRunner
from hudi_ds.services.target import TableFiles
from hudi_ds.storage import Storage

_async_lock = threading.Lock()
_async_runners: dict[str, CompactionRunner] = {}


class TableServices:
    """A post-commit hook (hudi_ds.write.client.PostCommitHook). `allow_async=False` executes compactions
    inline even when the options ask for a background runner: for writers whose process ends with the commit
    (Spark batch writes)."""

    def __init__(self, options: HudiOptions, *, allow_async: bool = True, owner: str | None = None) -> None:
        self.options = options
        self.allow_async = allow_async
        self.owner = owner  # names a writer that runs once at a time: its crashed compactions are its own

    def __call__(self, storage: Storage, config: TableConfig) -> None:
        opts = self.options
        table = TableFiles(storage, config)
        if config.is_mor and opts.compaction_enabled:
            self._compact(table)
        if opts.clean_enabled:
            clean.clean(table, clean.CleanPolicy.of(opts), sweep_staged=False)
        if opts.archive_enabled:
            archive.archive(table, min_commits=opts.archive_min_commits, max_commits=opts.archive_max_commits,
                            compaction_delta_commits=opts.compaction_delta_commits)

    def _compact(self, table: TableFiles) -> None:
        # never wait on other writers here: a plan that cannot run now runs after a later commit
        scheduled = compaction.schedule_compaction(table, min_delta_commits=self.options.compaction_delta_commits,
                                                   wait_s=0)
        if self.options.compaction_async and self.allow_async:
            with _async_lock:
                runner = _async_runners.get(table.storage.full(""))
                if runner is None:
                    runner = _async_runners[table.storage.full("")] = CompactionRunner(
                        table, wait_s=0, heartbeat_timeout_s=self.options.heartbeat_timeout_s, owner=self.owner)
            if runner.errors:
                raise runner.errors[0]
            runner.trigger()
            return
        if scheduled:
            faults.pause_point("compaction_scheduled")
        # a plan another writer's executor holds is left to it while its heartbeat is fresh (other writers of
        # the table run these services too); one left by a crashed executor is taken over once it expired, or at
        # once if it was this writer's own
        compaction.run_compaction(table, wait_s=0, heartbeat_timeout_s=self.options.heartbeat_timeout_s,
                                  owner=self.owner)


def background_runner(storage: Storage) -> CompactionRunner | None:
    """The background compaction runner of this process for the table (None before its first async compaction);
    `wait()` on it before a process that asked for async compaction exits."""
    with _async_lock:
        return _async_runners.get(storage.full(""))
