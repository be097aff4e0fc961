"""The progress bar of long commands (compact, clean, validate, show, info, files): on stderr, on a terminal only
(never with --json, never when piped), fed by the table's own file operations.

The table's Storage is wrapped so that every data file read, written, deleted or listed (files under .hoodie/
aside) is counted, whatever code does it: a service needs no progress hooks of its own. A command that knows
its amount of work up front (the operations of a compaction plan, the checks of validate) gets a bar with a
total; the others a running count.
"""

from __future__ import annotations

import contextlib
from collections import Counter
from collections.abc import Callable, Iterable, Iterator
from contextlib import AbstractContextManager

import pyarrow as pa
from rich.console import Console
from rich.progress import (
    BarColumn,
    MofNCompleteColumn,
    Progress,
    SpinnerColumn,
    TaskID,
    TextColumn,
    TimeElapsedColumn,
)

from hudi_ds.storage import FileEntry, Storage

READ, WRITTEN, DELETED, LISTED = "read", "written", "deleted", "listed"


def _is_data(rel: str) -> bool:
    return not (rel.startswith(".hoodie/") or "/.hoodie/" in rel or rel == ".hoodie")


class WatchedStorage(Storage):
    """A Storage that tells `on_file(kind, path)` of each data file it reads, writes, deletes or lists."""

    def __init__(self, inner: Storage, on_file: Callable[[str, str], None]) -> None:
        self.inner, self.on_file, self.uri = inner, on_file, inner.uri

    def _saw(self, kind: str, rel: str) -> None:
        if _is_data(rel):
            self.on_file(kind, rel)

    def full(self, rel: str) -> str:
        return self.inner.full(rel)

    def exists(self, rel: str) -> bool:
        return self.inner.exists(rel)

    def is_dir(self, rel: str) -> bool:
        return self.inner.is_dir(rel)

    def size(self, rel: str) -> int:
        return self.inner.size(rel)

    def read_bytes(self, rel: str) -> bytes:
        self._saw(READ, rel)
        return self.inner.read_bytes(rel)

    def open_input(self, rel: str) -> pa.NativeFile:
        self._saw(READ, rel)
        return self.inner.open_input(rel)

    def makedirs(self, rel: str) -> None:
        self.inner.makedirs(rel)

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.inner.write_bytes(rel, data)
        self._saw(WRITTEN, rel)

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        created = self.inner.put_if_absent(rel, data)
        if created:
            self._saw(WRITTEN, rel)
        return created

    def delete(self, rel: str, missing_ok: bool = True) -> None:
        self.inner.delete(rel, missing_ok)
        self._saw(DELETED, rel)

    def discard_staged(self, rels: Iterable[str] | None = None) -> None:
        self.inner.discard_staged(rels)

    def delete_dir(self, rel: str) -> None:
        self.inner.delete_dir(rel)

    def list(self, rel: str = "") -> list[FileEntry]:
        return self.inner.list(rel)

    def walk_files(self, rel: str = "") -> Iterator[FileEntry]:
        for entry in self.inner.walk_files(rel):
            self._saw(LISTED, entry.path)
            yield entry

    def lock(self, rel: str, timeout_s: float) -> AbstractContextManager[None]:
        return self.inner.lock(rel, timeout_s)


class Tracker:
    """One command's bar: advanced by the file operations of kind `advance_on`, or by at() calls."""

    def __init__(self, progress: Progress | None, task: TaskID | None, advance_on: str | None) -> None:
        self.progress, self.task, self.advance_on = progress, task, advance_on
        self.counts: Counter[str] = Counter()

    def on_file(self, kind: str, rel: str) -> None:
        self.counts[kind] += 1
        if self.progress is None or self.task is None:
            return
        shown = ", ".join(f"{self.counts[k]} {k}" for k in (LISTED, READ, WRITTEN, DELETED) if self.counts[k])
        self.progress.update(self.task, files=f"files: {shown}", advance=1 if kind == self.advance_on else 0)

    def at(self, description: str, done: int, total: int) -> None:
        """`done` of `total` steps are done; `description` names the one running."""
        if self.progress is not None and self.task is not None:
            self.progress.update(self.task, description=description, completed=done, total=total)

    def watch(self, storage: Storage) -> Storage:
        """`storage`, reporting to this bar (unchanged when no bar is shown)."""
        return storage if self.progress is None else WatchedStorage(storage, self.on_file)


@contextlib.contextmanager
def progress_bar(enabled: bool, console: Console, description: str, total: int | None = None,
                 advance_on: str | None = None) -> Iterator[Tracker]:
    """A bar on `console` while the block runs (removed when it ends); a silent Tracker when not `enabled`."""
    if not enabled:
        yield Tracker(None, None, advance_on)
        return
    count = MofNCompleteColumn() if total is not None else TextColumn("")
    with Progress(SpinnerColumn(), TextColumn("{task.description}"), BarColumn(), count,
                  TextColumn("[dim]{task.fields[files]}"), TimeElapsedColumn(), console=console,
                  transient=True) as progress:
        task = progress.add_task(description, total=total, files="")
        yield Tracker(progress, task, advance_on)
