"""Every error hudi_ds raises on purpose is a HudiDsError; each message names the problem and the fix."""

from __future__ import annotations


class HudiDsError(Exception):
    """Base class of all hudi_ds errors."""


def is_native_panic(exc: BaseException) -> bool:
    """A panic of a Rust library (obstore, polars), raised into Python as pyo3's PanicException: a BaseException
    that `except Exception` misses, so entry points turn it into a HudiDsError or a one-line CLI error."""
    return type(exc).__name__ == "PanicException" and type(exc).__module__ == "pyo3_runtime"


class TableNotFoundError(HudiDsError):
    """The path holds no Hudi table (no .hoodie/hoodie.properties)."""


class ConfigError(HudiDsError):
    """An option is unknown, malformed, or contradicts the table's own configuration."""


class TableExistsError(ConfigError):
    """create() over an existing table whose settings differ from the requested ones."""


class SchemaError(HudiDsError):
    """Input columns are missing or their types conflict with the table schema."""


class InvalidDataError(HudiDsError):
    """Input values cannot be stored: null record keys, unsafe partition values, unsupported types."""


class DuplicateKeyError(InvalidDataError):
    """An insert-if-absent write (hoodie.datasource.insert.dup.policy=fail) carries keys the table holds."""


class UnsupportedTableError(HudiDsError):
    """The table uses a feature this version cannot write (or read) safely."""


class CorruptTableError(HudiDsError):
    """A table file is missing, truncated or unparseable; the message names the file."""


class MissingFileError(CorruptTableError):
    """A file the visible commits list is not there. Raised by a read whose timeline went stale while it ran (a
    clean removed a slice a newer compaction replaced) as much as by real loss: readers re-plan once the timeline
    has moved, and report it only when the file is missing from the latest timeline too."""


class CommitConflictError(HudiDsError):
    """Another writer committed to the same file groups first. Nothing was written; safe to retry."""


class CommitStateUnknownError(HudiDsError):
    """The commit may or may not have completed; inspect the timeline before retrying."""


class InstantNotFoundError(HudiDsError):
    """An instant named by the caller is not on the timeline."""


class InvalidInstantError(ConfigError, ValueError):
    """A value given as an instant time (as_of, start, end, rollback target) cannot be read as one."""


class InstantStateError(HudiDsError):
    """The instant exists but its state does not allow the operation (completed, or not the latest)."""


class CleanedInstantsError(HudiDsError):
    """The commits an incremental or streaming read still needs were cleaned or archived."""


class StorageError(HudiDsError):
    """The file system or object store failed a request after retries; the message names the file."""
