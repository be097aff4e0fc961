"""A table nested in another table's folder (the metadata table in `.hoodie/metadata`), as a Storage of its own.

The nested table's timeline, properties and files are addressed relative to its own base path, as Hudi's code
addresses them; every call goes to the outer table's storage (one connection, one set of credentials), with the
folder prefixed and stripped again from listings.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from contextlib import AbstractContextManager

import pyarrow as pa

from hudi_ds.storage import FileEntry, Storage, require_inside


class SubStorage(Storage):
    """The files under `folder` of `outer`, addressed relative to that folder."""

    def __init__(self, outer: Storage, folder: str) -> None:
        self.outer = outer
        self.read_ahead = outer.read_ahead
        self.folder = require_inside(folder.strip("/"))
        self.uri = outer.full(self.folder)

    def _rel(self, rel: str) -> str:
        rel = require_inside(rel.strip("/"))
        return f"{self.folder}/{rel}" if rel else self.folder

    def _entry(self, entry: FileEntry) -> FileEntry:
        return FileEntry(entry.path[len(self.folder) + 1:], entry.size, entry.is_dir, entry.mtime_ns)

    def full(self, rel: str) -> str:
        return self.outer.full(self._rel(rel))

    def exists(self, rel: str) -> bool:
        return self.outer.exists(self._rel(rel))

    def is_dir(self, rel: str) -> bool:
        return self.outer.is_dir(self._rel(rel))

    def size(self, rel: str) -> int:
        return self.outer.size(self._rel(rel))

    def read_bytes(self, rel: str) -> bytes:
        return self.outer.read_bytes(self._rel(rel))

    def open_input(self, rel: str) -> pa.NativeFile:
        return self.outer.open_input(self._rel(rel))

    def makedirs(self, rel: str) -> None:
        self.outer.makedirs(self._rel(rel))

    def write_bytes(self, rel: str, data: bytes) -> None:
        self.outer.write_bytes(self._rel(rel), data)

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        return self.outer.put_if_absent(self._rel(rel), data)

    def delete(self, rel: str, missing_ok: bool = True) -> None:
        self.outer.delete(self._rel(rel), missing_ok)

    def discard_staged(self, rels: Iterable[str] | None = None) -> None:
        """Leftovers of interrupted writes of `rels`; every file of the nested table is written by name, so
        None (any file) names the files listed under its folder."""
        if rels is None:
            rels = [e.path for e in self.walk_files("")]
        self.outer.discard_staged([self._rel(r) for r in rels])

    def delete_dir(self, rel: str) -> None:
        self.outer.delete_dir(self._rel(rel))

    def list(self, rel: str = "") -> list[FileEntry]:
        return [self._entry(e) for e in self.outer.list(self._rel(rel))]

    def walk_files(self, rel: str = "") -> Iterator[FileEntry]:
        return (self._entry(e) for e in self.outer.walk_files(self._rel(rel)))

    def lock(self, rel: str, timeout_s: float) -> AbstractContextManager[None]:
        return self.outer.lock(self._rel(rel), timeout_s)
