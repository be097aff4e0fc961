"""hudi_ds: read and write Apache Hudi tables from Python and PySpark (format name "hudi-py")."""

from hudi_ds.config.hudi_features import IgnoredOptionWarning
from hudi_ds.errors import (
    CleanedInstantsError,
    CommitConflictError,
    CommitStateUnknownError,
    ConfigError,
    CorruptTableError,
    DuplicateKeyError,
    HudiDsError,
    InstantNotFoundError,
    InstantStateError,
    InvalidDataError,
    InvalidInstantError,
    MissingFileError,
    SchemaError,
    StorageError,
    TableExistsError,
    TableNotFoundError,
    UnsupportedTableError,
)
from hudi_ds.table import HudiTable

__version__ = "0.1.0"

__all__ = [
    "CleanedInstantsError",
    "CommitConflictError",
    "CommitStateUnknownError",
    "ConfigError",
    "CorruptTableError",
    "DuplicateKeyError",
    "HudiDsError",
    "HudiTable",
    "IgnoredOptionWarning",
    "InstantNotFoundError",
    "InstantStateError",
    "InvalidDataError",
    "InvalidInstantError",
    "MissingFileError",
    "SchemaError",
    "StorageError",
    "TableExistsError",
    "TableNotFoundError",
    "UnsupportedTableError",
]
