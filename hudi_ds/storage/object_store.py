"""A table in an object store (S3, GCS, Azure) through obstore (the Rust object_store crate).

Why obstore: it sends the stores' conditional create (`If-None-Match: *` on S3 and Azure,
`ifGenerationMatch=0` on GCS) for `put(..., mode="create")`, which is the commit point of the timeline;
pyarrow's file systems have no conditional put. Objects appear whole, so plain PUTs need no staging.
Requests are retried with a bounded backoff; a request that still fails becomes a `StorageError` naming
the operation, the file and the store's answer, never a credential. The options arrive checked
(storage_options.py); a panic of the Rust client that a check missed still becomes a `StorageError`.
"""

from __future__ import annotations

import contextlib
import dataclasses
import datetime
import functools
import json
import threading
import time
import uuid
import warnings
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from typing import Any, TypeVar

import obstore
import pyarrow as pa
from obstore.exceptions import AlreadyExistsError, BaseError, NotSupportedError, PreconditionError

from hudi_ds.errors import ConfigError, StorageError, is_native_panic
from hudi_ds.storage import FileEntry, Storage, require_inside
from hudi_ds.storage.layout import AUX_DIR
from hudi_ds.storage.storage_options import CLIENT_KEYS, SHOWN_KEYS, STORE_KEYS, TableLocation, serves
from hudi_ds.storage.store_errors import StoreFailure

T = TypeVar("T")

RETRY = {"max_retries": 4, "retry_timeout": datetime.timedelta(seconds=30),
         "backoff": {"init_backoff": datetime.timedelta(milliseconds=100),
                     "max_backoff": datetime.timedelta(seconds=5), "base": 2}}
DELETE_BATCH = 1000  # S3's DeleteObjects limit
_conditional_create: dict[tuple[str, str], bool] = {}  # (endpoint, bucket) -> honours If-None-Match
_probe_lock = threading.Lock()


def _store_config(scheme: str, options: dict[str, str]) -> tuple[dict[str, str], dict[str, Any]]:
    """The store and client settings of the store of `scheme`, from its own family's keys only."""
    config = {STORE_KEYS[k]: v for k, v in options.items() if k in STORE_KEYS and serves(scheme, k)}
    client = {CLIENT_KEYS[k]: v == "true" for k, v in options.items() if k in CLIENT_KEYS and serves(scheme, k)}
    return config, client


class ObjectStorage(Storage):
    def __init__(self, location: TableLocation, options: dict[str, str]) -> None:
        self.location, self.options, self.uri = location, dict(options), location.uri
        self._store: Any = None

    def __getstate__(self) -> dict[str, object]:
        return {"location": self.location, "options": self.options}

    def __setstate__(self, state: dict[str, Any]) -> None:
        self.__init__(state["location"], state["options"])  # type: ignore[misc]

    @property
    def store(self) -> Any:
        if self._store is None:
            config, client = _store_config(self.location.scheme, self.options)
            try:
                self._store = obstore.store.from_url(self.uri, config=config,  # type: ignore[call-overload]
                                                     client_options=client, retry_config=RETRY)
            except BaseException as exc:
                if not (isinstance(exc, (BaseError, ValueError)) or is_native_panic(exc)):
                    raise
                raise ConfigError(f"cannot set up the object store of {self.uri}: "
                                  f"{self._redact(str(exc).splitlines()[0])}; check the table URI and the storage "
                                  "options") from None
        return self._store

    def _call(self, what: str, rel: str, fn: Callable[[], T],
              passed: tuple[type[BaseError], ...] = (AlreadyExistsError, PreconditionError)) -> T:
        """Run one request; store failures other than 'not found' and `passed` become StorageError without
        secrets, and so does a panic of the store client."""
        try:
            return fn()
        except FileNotFoundError:
            raise FileNotFoundError(self.full(rel)) from None
        except passed:
            raise
        except BaseError as exc:
            failure = StoreFailure.parse(str(exc))
            if what == "HEAD" and failure.answered_without_code:
                failure = self._with_code_of_get(rel, failure)
            raise StorageError(f"{what} {self.full(rel)} failed{self._redact(failure.describe())}") from None
        except BaseException as exc:
            if not is_native_panic(exc):
                raise
            raise StorageError(
                f"{what} {self.full(rel)} failed: the object store client crashed "
                f"({self._redact(str(exc).splitlines()[0] if str(exc) else type(exc).__name__)}). A storage option "
                "it cannot use is the likely cause: check them (docs/object-stores.md)") from None

    def _with_code_of_get(self, rel: str, failure: StoreFailure) -> StoreFailure:
        """A HEAD answer has no body: a GET of the same key shows the store's error code and message."""
        try:
            obstore.get(self.store, _key(rel))
        except BaseError as exc:
            answer = StoreFailure.parse(str(exc))
            if answer.status == failure.status and answer.code:
                return dataclasses.replace(failure, code=answer.code, message=answer.message)
        except BaseException as exc:
            if not is_native_panic(exc):
                raise
        return failure

    def _redact(self, text: str) -> str:
        for key, value in self.options.items():
            if key not in SHOWN_KEYS and len(value) >= 4:
                text = text.replace(value, "***")
        return text.split("?", 1)[0] if "sig=" in text or "X-Amz-" in text else text

    def full(self, rel: str) -> str:
        rel = require_inside(rel.strip("/"))
        return f"{self.uri}/{rel}" if rel else self.uri

    def exists(self, rel: str) -> bool:
        try:
            self._call("HEAD", rel, lambda: obstore.head(self.store, _key(rel)))
            return True
        except FileNotFoundError:
            return self.is_dir(rel)

    def is_dir(self, rel: str) -> bool:
        prefix = _key(rel)
        if not prefix:
            return True
        found = self._call("LIST", rel, lambda: obstore.list_with_delimiter(self.store, prefix + "/"))
        return bool(found["objects"] or found["common_prefixes"])

    def size(self, rel: str) -> int:
        return int(self._call("HEAD", rel, lambda: obstore.head(self.store, _key(rel)))["size"])

    def read_bytes(self, rel: str) -> bytes:
        return bytes(self._call("GET", rel, lambda: obstore.get(self.store, _key(rel)).bytes()))

    def open_input(self, rel: str) -> pa.NativeFile:
        """The whole object in memory: one GET per file, which parquet then reads at its own pace."""
        return pa.BufferReader(self.read_bytes(rel))

    def makedirs(self, rel: str) -> None:
        """Object stores have no folders: a key's prefixes exist while it does."""

    def write_bytes(self, rel: str, data: bytes) -> None:
        self._call("PUT", rel, lambda: obstore.put(self.store, _key(rel), data))

    def put_if_absent(self, rel: str, data: bytes) -> bool:
        self._require_conditional_create()
        try:
            self._call("PUT", rel, lambda: obstore.put(self.store, _key(rel), data, mode="create"))
        except (AlreadyExistsError, PreconditionError):
            return False
        return True

    def _require_conditional_create(self) -> None:
        """Commits are conditional creates: on a store that ignores them two writers could both win. Probed once
        per store and process; without it writes need the HUDI_SINGLE_WRITER storage option."""
        if self.options.get("HUDI_SINGLE_WRITER", "").lower() == "true":
            return
        store_id = (self.options.get("AWS_ENDPOINT_URL") or self.options.get("AZURE_STORAGE_ENDPOINT") or "",
                    self.uri.split("/")[2])
        with _probe_lock:
            supported = _conditional_create.get(store_id)
            if supported is None:
                supported = _conditional_create[store_id] = self._probe_conditional_create()
        if not supported:
            raise ConfigError(
                f"the object store of {self.uri} does not honour conditional creates (If-None-Match: *), which "
                "hudi-py's commits rely on: two writers could both commit. Use a store that supports them (AWS S3, "
                "GCS, Azure, MinIO), or declare that only one writer ever writes this table with the storage "
                "option HUDI_SINGLE_WRITER=true")

    def _probe_conditional_create(self) -> bool:
        key = f"{AUX_DIR}/.conditional-create-probe-{uuid.uuid4().hex}"
        passed = (AlreadyExistsError, PreconditionError, NotSupportedError)
        try:
            self._call("PUT", key, lambda: obstore.put(self.store, key, b"1", mode="create"), passed)
            try:
                self._call("PUT", key, lambda: obstore.put(self.store, key, b"2", mode="create"), passed)
            except (AlreadyExistsError, PreconditionError):
                return True
            return False
        except NotSupportedError:
            return False
        finally:
            with contextlib.suppress(StorageError, FileNotFoundError):
                self._call("DELETE", key, lambda: obstore.delete(self.store, key))

    def discard_staged(self, rels: Iterable[str] | None = None) -> None:
        """Nothing to do: an object PUT is whole or absent, no staged copy is ever made."""

    def delete(self, rel: str, missing_ok: bool = True) -> None:
        if not missing_ok and not self.exists(rel):
            raise FileNotFoundError(self.full(rel))
        try:
            self._call("DELETE", rel, lambda: obstore.delete(self.store, _key(rel)))
        except FileNotFoundError:
            if not missing_ok:
                raise

    def delete_dir(self, rel: str) -> None:
        keys = [e.path for e in self.walk_files(rel)]
        for i in range(0, len(keys), DELETE_BATCH):
            self._call("DELETE", rel, functools.partial(obstore.delete, self.store, keys[i:i + DELETE_BATCH]))

    @contextmanager
    def lock(self, rel: str, timeout_s: float) -> Iterator[None]:
        """A lease object created with a conditional create; an expired lease is taken over with a conditional
        update on its ETag, so of two writers taking it over only one succeeds. While held, the lease is renewed
        (a conditional update on our own ETag) so a long holder (a clean or an upgrade of a large table) keeps
        it: only a holder that stopped renewing (crashed, or stalled for LEASE_S) loses it."""
        key, owner = _key(rel), uuid.uuid4().hex
        deadline = time.monotonic() + timeout_s
        while (version := self._take_lease(key, owner)) is None:
            if time.monotonic() > deadline:
                raise StorageError(f"the lock {self.full(rel)} stayed held by another writer for {timeout_s:.0f} s; "
                                   "retry later")
            time.sleep(0.02)
        renewal = _LeaseRenewal(self, key, owner, version)
        renewal.start()
        try:
            yield
        finally:
            renewal.stop()
            with contextlib.suppress(StorageError, FileNotFoundError):
                held = self._call("GET", key, lambda: bytes(obstore.get(self.store, key).bytes()))
                if json.loads(held).get("owner") == owner:
                    self._call("DELETE", key, lambda: obstore.delete(self.store, key))

    def _take_lease(self, key: str, owner: str) -> Any:
        """Our lease's update version (its ETag or version id; empty when the store gives neither), or None
        while another holder's lease is live."""
        lease = _lease(owner)
        try:
            return _update_version(self._call("PUT", key, lambda: obstore.put(self.store, key, lease, mode="create")))
        except (AlreadyExistsError, PreconditionError):
            pass
        try:
            current = self._call("GET", key, lambda: obstore.get(self.store, key))
            held = json.loads(bytes(current.bytes()))
        except FileNotFoundError:
            return None  # released meanwhile: try again
        except ValueError:
            held = {"expires": 0}  # a torn or foreign lease: treat as expired
        if float(held.get("expires", 0)) > time.time():
            return None
        # obstore's UpdateVersion: the fields the store gave (moto and S3 give an ETag, no version id)
        version = _update_version(current.meta)
        if not version:
            raise StorageError(f"the lock {self.full(key)} expired, but the store gave no ETag or version to take it "
                               "over safely; delete it by hand once no writer is running")
        try:
            return _update_version(self._call("PUT", key, lambda: obstore.put(self.store, key, lease, mode=version)))
        except (AlreadyExistsError, PreconditionError):
            return None

    def list(self, rel: str = "") -> list[FileEntry]:
        prefix = _folder(rel)
        found = self._call("LIST", rel, lambda: obstore.list_with_delimiter(self.store, prefix or None))
        out = [FileEntry(p.rstrip("/"), 0, True) for p in found["common_prefixes"]]
        out.extend(_entry(meta) for meta in found["objects"])
        return out

    def walk_files(self, rel: str = "") -> Iterator[FileEntry]:
        prefix = _folder(rel)
        chunks = self._call("LIST", rel, lambda: list(obstore.list(self.store, prefix or None, chunk_size=1000)))
        return (_entry(meta) for chunk in chunks for meta in chunk)


LEASE_S = 60.0  # a crashed holder's lease expires after this; commits hold the lock for well under a second


def _lease(owner: str) -> bytes:
    return json.dumps({"owner": owner, "expires": time.time() + LEASE_S}).encode()


def _update_version(meta: Any) -> Any:
    """obstore's UpdateVersion from a PUT result or an object's metadata: the ETag and version id it has."""
    return {k: meta.get(k) for k in ("e_tag", "version") if meta.get(k) is not None}


class _LeaseRenewal:
    """Renews a held lease every third of LEASE_S with a conditional update on our own last ETag. A renewal
    that finds the lease changed means another writer took it over (we stalled past LEASE_S): it stops and
    warns, since the holder's work may now overlap another's. Transient store errors are retried at the next
    tick (the lease still has two thirds of its time)."""

    def __init__(self, storage: ObjectStorage, key: str, owner: str, version: Any) -> None:
        self.storage, self.key, self.owner, self.version = storage, key, owner, version
        self._stopped = threading.Event()
        self._thread = threading.Thread(target=self._run, name=f"hudi-ds-lease-{key}", daemon=True)

    def start(self) -> None:
        if self.version:  # a store without ETags: the lease cannot be renewed safely, it lasts LEASE_S
            self._thread.start()

    def stop(self) -> None:
        self._stopped.set()
        if self._thread.is_alive():
            self._thread.join()

    def _run(self) -> None:
        st = self.storage
        while not self._stopped.wait(LEASE_S / 3):
            lease = _lease(self.owner)
            try:
                put = st._call("PUT", self.key, functools.partial(obstore.put, st.store, self.key, lease,
                                                                  mode=self.version))
            except (AlreadyExistsError, PreconditionError, FileNotFoundError):
                warnings.warn(f"the lock {st.full(self.key)} was taken over by another writer while this one held "
                              f"it (it stalled for more than {LEASE_S:.0f} s); check the table with hudi-py validate",
                              RuntimeWarning, stacklevel=1)
                return
            except StorageError:
                continue
            self.version = _update_version(put) or self.version


def _key(rel: str) -> str:
    """The object key of a table file, relative to the store's prefix (the table folder)."""
    return require_inside(rel.strip("/"))


def _folder(rel: str) -> str:
    """The key prefix of a folder: 'a/b/' (so 'a/bc' is not inside 'a/b'), '' for the table root."""
    rel = _key(rel)
    return f"{rel}/" if rel else ""


def _entry(meta: Any) -> FileEntry:
    modified = meta.get("last_modified")
    mtime = int(modified.timestamp() * 1_000_000_000) if modified is not None else None
    return FileEntry(str(meta["path"]), int(meta["size"]), False, mtime)
