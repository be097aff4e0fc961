"""One small interface over pyarrow.fs: every table file goes through Storage.

Paths handed to Storage are relative to the table's base path and use '/'.
`put_if_absent` is the primitive commits rely on: on the local file system it is
atomic (O_CREAT|O_EXCL); on other file systems it is a check-then-write and the
docs say so.
"""

from __future__ import annotations

import os
import posixpath
import uuid
from collections.abc import Iterator
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.fs as pafs

from hudi_ds.errors import HudiDsError


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the table base path
    size: int
    is_dir: bool
    mtime_ns: int | None = None

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class Storage:
    """Files of one table, addressed relative to its base path."""

    def __init__(self, base_uri: str) -> None:
        base_uri = str(base_uri)
        if "://" in base_uri:
            self.fs, base = pafs.FileSystem.from_uri(base_uri)
            self.local = isinstance(self.fs, pafs.LocalFileSystem)
        else:
            self.fs = pafs.LocalFileSystem()
            base = os.path.abspath(os.path.expanduser(base_uri))
            self.local = True
        self.base = base.rstrip("/") or "/"
        self.uri = base_uri

    def __getstate__(self) -> dict[str, object]:
        return {"uri": self.uri}

    def __setstate__(self, state: dict[str, str]) -> None:
        self.__init__(state["uri"])  # type: ignore[misc]

    def full(self, rel: str) -> str:
        rel = rel.strip("/")
        return f"{self.base}/{rel}" if rel else self.base

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

    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write a whole file; on the local file system readers never see it half written."""
        full = self.full(rel)
        parent = posixpath.dirname(full)
        self.fs.create_dir(parent, recursive=True)
        if self.local:
            tmp = f"{parent}/.{posixpath.basename(full)}.{uuid.uuid4().hex}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            os.replace(tmp, full)
        else:
            with self.fs.open_output_stream(full) as f:
                f.write(data)

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        """Create the file only if it does not exist; True if this call created it."""
        full = self.full(rel)
        self.fs.create_dir(posixpath.dirname(full), recursive=True)
        if self.local:
            tmp = f"{posixpath.dirname(full)}/.{posixpath.basename(full)}.{uuid.uuid4().hex}.tmp"
            with open(tmp, "wb") as f:
                f.write(data)
            try:
                os.link(tmp, full)  # atomic, fails if the name exists; content is complete when visible
            except FileExistsError:
                return False
            finally:
                os.unlink(tmp)
            return True
        if self.exists(rel):
            return False
        with self.fs.open_output_stream(full) as f:
            f.write(data)
        return True

    def delete(self, rel: str, missing_ok: bool = True) -> None:
        try:
            self.fs.delete_file(self.full(rel))
        except FileNotFoundError:
            if not missing_ok:
                raise

    def delete_dir(self, rel: str) -> None:
        if self.exists(rel):
            self.fs.delete_dir(self.full(rel))

    def list(self, rel: str = "", recursive: bool = False) -> list[FileEntry]:
        """Entries under a folder (empty when the folder does not exist)."""
        sel = pafs.FileSelector(self.full(rel), allow_not_found=True, recursive=recursive)
        out = []
        prefix = self.base + "/"
        for info in self.fs.get_file_info(sel):
            path = info.path[len(prefix):] if info.path.startswith(prefix) else info.path
            out.append(FileEntry(path, int(info.size or 0), info.type == pafs.FileType.Directory, info.mtime_ns))
        return out

    def walk_files(self, rel: str = "") -> Iterator[FileEntry]:
        for entry in self.list(rel, recursive=True):
            if not entry.is_dir:
                yield entry


def require_inside(rel: str) -> str:
    """Refuse a relative path that could leave the table folder."""
    parts = rel.split("/")
    if rel.startswith("/") or any(p in ("..", ".") for p in parts) or "\\" in rel or "\x00" in rel:
        raise HudiDsError(f"refusing path {rel!r}: it would leave the table folder")
    return rel
