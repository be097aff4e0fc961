"""Which tables hudi_ds may change: the checks every writer and table service runs first."""

from __future__ import annotations

from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import UnsupportedTableError
from hudi_ds.index.choice import check_index_writable
from hudi_ds.table_format import table_format


def check_timeline_writable(config: TableConfig) -> None:
    """Refuse to change the timeline of tables whose format this version does not write."""
    table_format(config)  # versions 6, 8 and 9 with their own layouts
    if config.metadata_partitions:
        raise UnsupportedTableError(
            "the table has a metadata table (hoodie.table.metadata.partitions="
            f"{','.join(config.metadata_partitions)}), which hudi_ds does not update yet; writing would make readers "
            "that list files through it (Apache Hudi, hudi-rs on versions 8 and 9) miss the new files. Disable it "
            "from Apache Hudi (a write with hoodie.metadata.enable=false deletes it) first")
    config.merge_ordering_field()  # a merger hudi_ds does not have (CUSTOM) is refused by name


def check_writable(config: TableConfig) -> None:
    """Refuse tables this version cannot write data into without corrupting them for other engines."""
    check_timeline_writable(config)
    check_index_writable(config)
