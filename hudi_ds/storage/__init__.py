"""One small interface to a table's files: every read, write, listing and delete goes through Storage.

Paths handed to Storage are relative to the table's base path and use '/'. `put_if_absent` is the
primitive commits rely on: an atomic create-if-absent on local disk (link) and on object stores (a
conditional PUT). `open_storage` picks the implementation from the URI's scheme.
"""

from __future__ import annotations

import os
import posixpath
import re
from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator, Mapping
from contextlib import AbstractContextManager
from dataclasses import dataclass
from urllib.parse import unquote

import pyarrow as pa

from hudi_ds.errors import CorruptTableError
from hudi_ds.storage.storage_options import (
    TableLocation,
    check_storage_options,
    normalize_storage_options,
    resolve_storage_options,
)


@dataclass(frozen=True)
class FileEntry:
    path: str  # relative to the table base path
    size: int
    is_dir: bool
    mtime_ns: int | None = None

    @property
    def name(self) -> str:
        return posixpath.basename(self.path)


class Storage(ABC):
    """Files of one table, addressed relative to its base path. Picklable: tasks rebuild it with its options."""

    uri: str
    # whether parquet reads fetch a file's column chunks ahead, coalesced, on Arrow's I/O threads (pre_buffer): on an
    # object store that saves a request per column; on local disk it is only a hand-over to an I/O thread and back
    read_ahead: bool = True

    @abstractmethod
    def full(self, rel: str) -> str:
        """The absolute path or URI of a table file (for metadata that records full paths)."""

    @abstractmethod
    def exists(self, rel: str) -> bool: ...

    @abstractmethod
    def is_dir(self, rel: str) -> bool: ...

    @abstractmethod
    def size(self, rel: str) -> int: ...

    @abstractmethod
    def read_bytes(self, rel: str) -> bytes: ...

    @abstractmethod
    def open_input(self, rel: str) -> pa.NativeFile:
        """A seekable file for pyarrow's parquet reader."""

    @abstractmethod
    def makedirs(self, rel: str) -> None: ...

    @abstractmethod
    def write_bytes(self, rel: str, data: bytes) -> None:
        """Write a whole file; readers never see it half written."""

    @abstractmethod
    def put_if_absent(self, rel: str, data: bytes) -> bool:
        """Create the file only if it does not exist, atomically; True if this call created it."""

    @abstractmethod
    def delete(self, rel: str, missing_ok: bool = True) -> None: ...

    @abstractmethod
    def discard_staged(self, rels: Iterable[str] | None = None) -> None:
        """Remove what interrupted writes of the files `rels` (None: of any file outside .hoodie) left beside
        them. Only leftovers untouched for a minute go: a live writer's staged copy is linked as soon as written."""

    @abstractmethod
    def delete_dir(self, rel: str) -> None: ...

    @abstractmethod
    def list(self, rel: str = "") -> list[FileEntry]:
        """Files and folders directly under a folder (empty when the folder does not exist)."""

    @abstractmethod
    def walk_files(self, rel: str = "") -> Iterator[FileEntry]:
        """Every file under a folder, at any depth."""

    @abstractmethod
    def lock(self, rel: str, timeout_s: float) -> AbstractContextManager[None]:
        """Hold the table-wide lock named `rel` (a crashed holder never keeps it for long); StorageError after
        `timeout_s` of waiting."""

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.uri!r})"  # never the options: they hold secrets


def open_storage(uri: str, storage_options: Mapping[str, object] | None = None) -> Storage:
    """The storage of a table URI: local disk, or an object store (s3://, s3a://, gs://, az://, abfs(s)://).
    Options not given are taken from the environment's variables of the same names. Every value is checked
    here, before any request: a malformed one is a ConfigError naming its key."""
    location = TableLocation.parse(str(uri))
    given = normalize_storage_options(storage_options)
    if location.is_local:
        from hudi_ds.storage.local import LocalStorage

        check_storage_options(given)  # unused on local disk, but a malformed value given is still a mistake
        return LocalStorage(location.local_path())
    from hudi_ds.storage.object_store import ObjectStorage

    return ObjectStorage(location, resolve_storage_options(location.scheme, given, os.environ))


def require_inside(rel: str, source: str | None = None) -> str:
    """`rel` if it names a file inside the table folder, else CorruptTableError naming the file it came from.

    Paths read from a table's own files (markers, commit and plan metadata, file names) are untrusted: anyone
    who can write into the folder could otherwise make a rollback or a clean delete files outside it."""
    problem = _escape(rel, raw=True)
    if problem is None and "%" in rel:
        problem = _escape(unquote(rel), raw=False)
        problem = problem and f"{problem} once percent-decoded"
    if problem is not None:
        where = f" (listed in {source})" if source else ""
        fix = f"; repair or remove {source}" if source else ""
        raise CorruptTableError(f"refusing path {rel!r}{where}: {problem}, so it would leave the table folder; "
                                f"nothing was read, written or deleted{fix}")
    return rel


def _escape(rel: str, raw: bool) -> str | None:
    """Why `rel` could leave the table folder, or None. A drive ('C:/...', 'C:') is a full path another machine
    wrote, refused as written; 'a:b' or 'a%3Ab' (a partition value url-encoded or not) is a relative folder: paths
    are joined to the base with '/', never resolved as Windows paths or URIs, and a decoded drive stays after it."""
    if "\x00" in rel:
        return "it contains a NUL byte"
    if "\\" in rel:
        return "it contains a backslash"
    if rel.startswith("/") or (raw and _DRIVE.match(rel)):
        return "it is absolute"
    if any(part in ("..", ".") for part in rel.split("/")):
        return "it has a '.' or '..' segment"
    return None


_DRIVE = re.compile(r"^[A-Za-z]:(/|$)")
