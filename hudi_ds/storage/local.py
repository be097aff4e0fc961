"""A table on local disk (or any POSIX mount): atomic renames and links make writes all-or-nothing."""

from __future__ import annotations

import builtins
import errno
import fcntl
import os
import posixpath
import re
import time
import uuid
from collections.abc import Iterable, Iterator
from contextlib import contextmanager

import pyarrow as pa
import pyarrow.fs as pafs

from hudi_ds.errors import CorruptTableError, StorageError
from hudi_ds.storage import FileEntry, Storage, require_inside

_STAGED_STALE_S = 60.0
_STAGED = re.compile(r"^\.hudi_ds~(.*)~[0-9a-f]{32}\.tmp$")
# how hudi_ds named a staged copy before 2026-11-26: ".<name>.<uuid4 hex>.tmp"
_OLD_STAGED = re.compile(r"^\.(.+)\.[0-9a-f]{32}\.tmp$")


def _staged_prefix(name: str) -> str:
    """How a staged copy of the file `name` begins. No dot but the first: Hudi's readers take a hidden name
    holding ".log." for a log file (Apache Hudi's pattern is unanchored, hudi-rs parses the file id up to the
    "_"), so a leftover of a killed writer must not look like one."""
    return ".hudi_ds~" + _tilde(name) + "~"


def _tilde(name: str) -> str:
    return name.replace(".", "~")


def staged_copy_of(entry: str) -> str | None:
    """The file name a staged copy named `entry` was to become (its dots as ~ for copies staged since
    2026-11-26), or None when `entry` is no staged copy."""
    m = _STAGED.match(entry) or _OLD_STAGED.match(entry)
    return m.group(1) if m else None


def misleads_hudi_readers(entry: str) -> bool:
    """A staged copy under the name used before 2026-11-26 of a log file: other Hudi readers take it for one."""
    m = _OLD_STAGED.match(entry)
    return m is not None and ".log." in m.group(1)


class LocalStorage(Storage):
    read_ahead = False

    def __init__(self, path: str) -> None:
        self.fs = pafs.LocalFileSystem()
        self.base = os.path.abspath(os.path.expanduser(path)).rstrip("/") or "/"
        self.uri = path

    def __getstate__(self) -> dict[str, object]:
        return {"uri": self.uri}

    def __setstate__(self, state: dict[str, str]) -> None:
        self.__init__(state["uri"])  # type: ignore[misc]

    def full(self, rel: str) -> str:
        rel = require_inside(rel.strip("/"))
        return f"{self.base}/{rel}" if rel else self.base

    def _target(self, rel: str) -> str:
        """The full path of a file to change; refused when a symlinked folder would take it out of the table."""
        full = self.full(rel)
        root = self._real_base()
        real = os.path.realpath(full)
        if real != root and not real.startswith(root + "/"):
            raise CorruptTableError(f"refusing to change {rel!r}: it resolves to {real}, outside the table folder "
                                    f"{root} (a symbolic link?); nothing was written or deleted")
        return full

    def _real_base(self) -> str:
        real = self.__dict__.get("_real")
        if real is None:
            real = self.__dict__["_real"] = os.path.realpath(self.base)
        return str(real)

    def exists(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full(rel)).type != pafs.FileType.NotFound

    def is_dir(self, rel: str) -> bool:
        return self.fs.get_file_info(self.full(rel)).type == pafs.FileType.Directory

    def size(self, rel: str) -> int:
        info = self.fs.get_file_info(self.full(rel))
        if info.type == pafs.FileType.NotFound:
            raise FileNotFoundError(self.full(rel))
        return int(info.size or 0)

    def read_bytes(self, rel: str) -> bytes:
        with self.fs.open_input_stream(self.full(rel)) as f:
            return bytes(f.read())

    def open_input(self, rel: str) -> pa.NativeFile:
        return self.fs.open_input_file(self.full(rel))

    def makedirs(self, rel: str) -> None:
        self.fs.create_dir(self.full(rel), recursive=True)

    def _staged(self, full: str, data: bytes) -> str:
        """The bytes in a hidden file beside `full`, complete before any reader can see the name."""
        parent = posixpath.dirname(full)
        self.fs.create_dir(parent, recursive=True)
        tmp = f"{parent}/{_staged_prefix(posixpath.basename(full))}{uuid.uuid4().hex}.tmp"
        with open(tmp, "wb") as f:
            f.write(data)
        return tmp

    def write_bytes(self, rel: str, data: bytes) -> None:
        full = self._target(rel)
        os.replace(self._staged(full, data), full)

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        full = self._target(rel)
        tmp = self._staged(full, data)
        try:
            os.link(tmp, full)  # atomic, fails if the name exists; content is complete when visible
        except FileExistsError:
            return False
        finally:
            os.unlink(tmp)
        return True

    def delete(self, rel: str, missing_ok: bool = True) -> None:
        try:
            self.fs.delete_file(self._target(rel))
        except FileNotFoundError:
            if not missing_ok:
                raise

    def discard_staged(self, rels: Iterable[str] | None = None) -> None:
        if rels is None:  # every folder outside .hoodie
            for folder, subfolders, entries in os.walk(self._target("")):
                if folder == self.base:
                    subfolders[:] = [d for d in subfolders if d != ".hoodie"]
                self._discard_stale(folder, None, entries)
            return
        names: dict[str, set[str]] = {}
        for rel in rels:
            parent, name = posixpath.split(self._target(rel))
            names.setdefault(parent, set()).update({name, _tilde(name)})  # old and new staged names
        for parent, wanted in names.items():
            self._discard_stale(parent, wanted)

    @staticmethod
    def _discard_stale(parent: str, wanted: set[str] | None, entries: list[str] | None = None) -> None:
        """Delete the staged copies in `parent` (of the files named in `wanted`, or of any) untouched for a
        minute: one listing of the folder (`entries`, when the caller listed it)."""
        if entries is None:
            try:
                entries = os.listdir(parent)
            except (FileNotFoundError, NotADirectoryError):
                return
        stale = time.time() - _STAGED_STALE_S
        for entry in entries:
            target = staged_copy_of(entry)
            if target is None or (wanted is not None and target not in wanted):
                continue
            try:
                if os.stat(f"{parent}/{entry}").st_mtime < stale:
                    os.unlink(f"{parent}/{entry}")
            except FileNotFoundError:
                pass

    def delete_dir(self, rel: str) -> None:
        for attempt in range(3):  # a writer taken for dead may still add a file meanwhile
            if not self.exists(rel):
                return
            try:
                self.fs.delete_dir(self._target(rel))
                return
            except OSError as exc:
                if exc.errno != errno.ENOTEMPTY or attempt == 2:
                    raise

    def list(self, rel: str = "") -> list[FileEntry]:
        return self._entries(rel, recursive=False)

    def walk_files(self, rel: str = "") -> Iterator[FileEntry]:
        return (e for e in self._entries(rel, recursive=True) if not e.is_dir)

    def _entries(self, rel: str, recursive: bool) -> builtins.list[FileEntry]:
        sel = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=recursive)
        for attempt in range(3):
            try:
                infos = self.fs.get_file_info(sel)
                break
            except FileNotFoundError:  # a folder another writer removed while it was being listed
                if attempt == 2:
                    raise
        out = []
        prefix = self.base + "/"
        for info in infos:
            path = info.path[len(prefix):] if info.path.startswith(prefix) else info.path
            out.append(FileEntry(path, int(info.size or 0), info.type == pafs.FileType.Directory, info.mtime_ns))
        return out

    @contextmanager
    def lock(self, rel: str, timeout_s: float) -> Iterator[None]:
        """An exclusive flock: the kernel releases it when the holder dies."""
        full = self._target(rel)
        os.makedirs(os.path.dirname(full), exist_ok=True)
        fd = os.open(full, os.O_RDWR | os.O_CREAT, 0o644)
        try:
            deadline = time.monotonic() + timeout_s
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() > deadline:
                        raise StorageError(f"the lock {full} stayed held by another writer for {timeout_s:.0f} s; "
                                           "retry later") from None
                    time.sleep(0.005)
            yield
        finally:
            os.close(fd)  # releases the lock

