"""Which tables hudi_ds may change: the checks every writer and table service runs first."""

from __future__ import annotations

from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import UnsupportedTableError
from hudi_ds.storage.layout import WRITE_LAYOUT, WRITE_TABLE_VERSION


def check_timeline_writable(config: TableConfig) -> None:
    """Refuse to change the timeline of tables whose format this version does not write."""
    if config.version != WRITE_TABLE_VERSION or config.layout_version != WRITE_LAYOUT:
        raise UnsupportedTableError(
            f"this is a version {config.version} table (timeline layout {config.layout_version}), read-only in "
            "hudi_ds: only version 6 tables can be written; read it, or write it with Apache Hudi"
        )
    if config.metadata_partitions:
        raise UnsupportedTableError(
            "the table has a metadata table (hoodie.table.metadata.partitions="
            f"{','.join(config.metadata_partitions)}), which hudi_ds does not update; writing would make Java readers "
            "miss files. Disable it from Apache Hudi (hoodie.metadata.enable=false) first"
        )


def check_writable(config: TableConfig) -> None:
    """Refuse tables this version cannot write data into without corrupting them for other engines."""
    check_timeline_writable(config)
    if not config.num_buckets:
        raise UnsupportedTableError(
            "the table has no bucket index (hoodie.bucket.index.num.buckets is not in hoodie.properties); "
            "hudi_ds writes bucket-index tables only"
        )


