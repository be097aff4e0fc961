"""What a table service works on: a table's files and its configuration (HudiTable is one)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Protocol

from hudi_ds.config.table_config import TableConfig
from hudi_ds.storage import Storage


class ServiceTarget(Protocol):
    @property
    def storage(self) -> Storage: ...

    @property
    def config(self) -> TableConfig: ...


@dataclass(frozen=True)
class TableFiles:
    """A ServiceTarget without the rest of the Python API (the write path hands services this)."""

    storage: Storage
    config: TableConfig
