"""Hudi data file names: base files `<fileId>_<token>_<instant>.parquet`, log files
`.<fileId>_<instant>.log.<version>_<token>`, change-data (CDC) files the same with `-cdc` appended
(hudi-format.md §3; Apache Hudi 0.13-0.15 write `-cdc`, later native log files `.cdc`)."""

from __future__ import annotations

import functools
import re
from dataclasses import dataclass

PARTITION_METAFILE = ".hoodie_partition_metadata"

_BASE_RE = re.compile(r"^([a-zA-Z0-9-]+)_([a-zA-Z0-9-]+)_([0-9]+)\.([a-zA-Z0-9]+)$")
_LOG_RE = re.compile(r"^\.(.+)_(.*)\.(log|archive)\.(\d+)(?:_((\d+)-(\d+)-(\d+))([-.]cdc)?)?$")
CDC_SUFFIX = "-cdc"


@dataclass(frozen=True)
class BaseFile:
    partition: str
    name: str
    file_id: str
    write_token: str
    instant: str
    size: int = 0

    @property
    def path(self) -> str:
        return f"{self.partition}/{self.name}" if self.partition else self.name


@dataclass(frozen=True)
class LogFile:
    partition: str
    name: str
    file_id: str
    instant: str  # v6: base instant of the slice; v8+: the delta commit that wrote it
    version: int
    write_token: str
    size: int = 0

    @property
    def path(self) -> str:
        return f"{self.partition}/{self.name}" if self.partition else self.name

    def sort_key(self) -> tuple[str, int, tuple[int, ...]]:
        """Java's HoodieLogFile order: instant, version, then write token."""
        token = tuple(int(p) for p in self.write_token.split("-")) if self.write_token else ()
        return (self.instant, self.version, token)


@functools.lru_cache(maxsize=1 << 16)  # a table's files are listed again on every read
def parse_base_file(partition: str, name: str, size: int = 0) -> BaseFile | None:
    m = _BASE_RE.match(name)
    if not m or m.group(4) not in ("parquet", "orc", "hfile"):
        return None
    return BaseFile(partition, name, m.group(1), m.group(2), m.group(3), size)


@functools.lru_cache(maxsize=1 << 16)
def parse_log_file(partition: str, name: str, size: int = 0) -> LogFile | None:
    m = _LOG_RE.match(name)
    if not m or m.group(9):  # change-data files sit beside a slice's logs but are not part of it
        return None
    return LogFile(partition, name, m.group(1), m.group(2), int(m.group(4)), m.group(5) or "", size)


@functools.lru_cache(maxsize=1 << 16)
def parse_cdc_file(partition: str, name: str, size: int = 0) -> LogFile | None:
    """A change-data file (a log file of CDC blocks), named like the slice's log files plus the CDC suffix."""
    m = _LOG_RE.match(name)
    if not m or not m.group(9) or m.group(3) != "log":
        return None
    return LogFile(partition, name, m.group(1), m.group(2), int(m.group(4)), m.group(5) or "", size)


def base_file_name(file_id: str, write_token: str, instant: str) -> str:
    return f"{file_id}_{write_token}_{instant}.parquet"


def log_file_name(file_id: str, instant: str, version: int, write_token: str) -> str:
    return f".{file_id}_{instant}.log.{version}_{write_token}"


def cdc_file_name(file_id: str, instant: str, version: int, write_token: str) -> str:
    return log_file_name(file_id, instant, version, write_token) + CDC_SUFFIX


def join(partition: str, name: str) -> str:
    return f"{partition}/{name}" if partition else name
