"""What a write needs to know before any task starts: made on the driver, pickled to tasks.

The plan pins the instant, the operation, the schema and, per (partition, bucket), the file group
that already holds that bucket, so every task routes a record to the same file group without
talking to the others.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from hudi_ds.config import TableConfig

OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table")
OPERATION_TYPES = {
    "upsert": "UPSERT",
    "insert": "INSERT",
    "bulk_insert": "BULK_INSERT",
    "delete": "DELETE",
    "insert_overwrite": "INSERT_OVERWRITE",
    "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
}


@dataclass(frozen=True)
class GroupTarget:
    """The current latest file slice of an existing file group."""

    file_id: str
    base_instant: str  # instant of the slice (base file instant, or first log's for log-only slices)
    base_file: str | None  # relative path of the base file, None for a log-only slice
    next_log_version: int


@dataclass(frozen=True)
class WritePlan:
    base_uri: str
    instant: str
    operation: str
    config: TableConfig
    schema: pa.Schema  # data schema after this write (no meta columns)
    groups: dict[tuple[str, int], GroupTarget] = field(default_factory=dict)
    known_commits: tuple[str, ...] = ()  # completed commits at begin(): later ones are checked for conflicts
    log_block_format: str = "parquet"
    parquet_compression: str = "snappy"
    max_buffer_bytes: int = 256 * 1024 * 1024
    max_base_file_rows: int = 0  # 0: no limit

    @property
    def action(self) -> str:
        if self.operation in ("insert_overwrite", "insert_overwrite_table"):
            return "replacecommit"
        return "deltacommit" if self.config.is_mor else "commit"

    @property
    def is_overwrite(self) -> bool:
        return self.operation in ("insert_overwrite", "insert_overwrite_table")

    @property
    def ordering_field(self) -> str | None:
        return self.config.ordering_field

    @property
    def num_buckets(self) -> int:
        return self.config.num_buckets or 1
