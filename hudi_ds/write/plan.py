"""What a write needs to know before any task starts: made on the driver, pickled to tasks.

The plan pins the instant, the operation, the schema and, per (partition, bucket), the file group
that already holds that bucket, so every task routes a record to the same file group without
talking to the others. Tables with a lookup index (SIMPLE, BLOOM, GLOBAL_*) number their file groups per partition
instead (hudi_ds.index.lookup) and carry what tasks need to find keys and place inserts.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import pyarrow as pa

from hudi_ds.config import TableConfig
from hudi_ds.errors import ConfigError
from hudi_ds.index.lookup import KeyLookup
from hudi_ds.merge.partial import KEEP_VALUES, PartialUpdate
from hudi_ds.storage import Storage
from hudi_ds.timeline.instant import Action
from hudi_ds.write.delete_markers import DeleteMarker
from hudi_ds.write.file_sizing import InsertPlacement

OPERATIONS = ("upsert", "insert", "bulk_insert", "delete", "insert_overwrite", "insert_overwrite_table",
              "delete_partition")
KEYED_OPERATIONS = ("upsert", "delete")  # they name existing records by key
# they replace file groups (a replacecommit); delete_partition replaces every group of its partitions with nothing
OVERWRITE_OPERATIONS = ("insert_overwrite", "insert_overwrite_table", "delete_partition")
OPERATION_TYPES = {
    "upsert": "UPSERT",
    "insert": "INSERT",
    "bulk_insert": "BULK_INSERT",
    "delete": "DELETE",
    "insert_overwrite": "INSERT_OVERWRITE",
    "insert_overwrite_table": "INSERT_OVERWRITE_TABLE",
    "delete_partition": "DELETE_PARTITION",
}


def default_operation(record_key_fields: Sequence[str]) -> str:
    """upsert; insert on a table without a record key, whose rows are only ever appended (Hudi's choice for
    Spark SQL INSERT INTO such tables)."""
    return "upsert" if record_key_fields else "insert"


def check_operation(operation: str, record_key_fields: Sequence[str]) -> None:
    """Refuse operations that look records up by key on a table without a record key."""
    if operation in KEYED_OPERATIONS and not record_key_fields:
        raise ConfigError(
            f"{operation} needs a record key, but the table has none (it was created without one: its rows get "
            "generated keys and are only appended); write with operation insert, bulk_insert or insert_overwrite, "
            "or create the table with a record key"
        )


def write_action(operation: str, is_mor: bool) -> str:
    """The timeline action of a write: overwrites replace file groups, other writes add to them."""
    if operation in OVERWRITE_OPERATIONS:
        return Action.REPLACE_COMMIT.value
    return Action.DELTA_COMMIT.value if is_mor else Action.COMMIT.value


@dataclass(frozen=True)
class GroupTarget:
    """The current latest file slice of an existing file group."""

    file_id: str
    base_instant: str  # instant of the slice (base file instant, or first log's for log-only slices)
    base_file: str | None  # relative path of the base file, None for a log-only slice
    next_log_version: int


@dataclass(frozen=True)
class WritePlan:
    storage: Storage
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
    lookup: KeyLookup | None = None  # SIMPLE / GLOBAL_SIMPLE: `groups` are keyed by (partition, slot)
    placement: InsertPlacement | None = None  # with `lookup`: where inserts go
    bloom_filters: bool = False  # base files carry Hudi's bloom filter footer (hudi_ds.index.choice)
    prefixed_keys: bool = False  # one-field ComplexKeyGenerator keys as `field:value` (the form the table holds)
    # the data columns a KEEP_VALUES partial update carries (empty: every column): its log blocks carry only these
    written_columns: tuple[str, ...] = ()
    delete_marker: DeleteMarker | None = None  # rows whose field holds the marker are deletes (write.delete_markers)
    # insert-if-absent (write.insert_duplicates): drop or fail, and the keys the table holds to check against
    duplicate_policy: str = "none"
    existing_keys: KeyLookup | None = None
    # delete_partition: the partitions hoodie.datasource.write.partitions.to.delete names (wildcards unresolved);
    # None: those of the rows (write.delete_partition)
    partitions_to_delete: tuple[str, ...] | None = None

    @property
    def action(self) -> str:
        return write_action(self.operation, self.config.is_mor)

    @property
    def is_overwrite(self) -> bool:
        return self.operation in OVERWRITE_OPERATIONS

    @property
    def ordering_field(self) -> str | None:
        """The field merges compare (none under commit-time ordering: the later write wins)."""
        return self.config.merge_ordering_field()

    @property
    def first_value(self) -> bool:
        """Ties keep the first version (FirstValueAvroPayload), in the write's own rows and against the table's."""
        return self.config.first_value

    def partial_columns(self) -> tuple[str, ...]:
        """The data columns this write's log blocks carry when it is a KEEP_VALUES partial update (empty: all)."""
        partial = self.partial
        if partial is None or partial.mode != KEEP_VALUES or self.operation == "delete":
            return ()
        return self.written_columns if set(self.schema.names) - set(self.written_columns) else ()

    @property
    def partial(self) -> PartialUpdate | None:
        """The table's partial update mode (hudi_ds.merge.partial)."""
        return self.config.partial_update()

    @property
    def num_buckets(self) -> int:
        return self.config.num_buckets or 1
