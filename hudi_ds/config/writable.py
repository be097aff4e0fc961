"""Which tables hudi_ds may change: the checks every writer and table service runs first."""

from __future__ import annotations

from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import UnsupportedTableError
from hudi_ds.index.choice import check_index_writable
from hudi_ds.metadata.layout import MAINTAINED
from hudi_ds.metadata.records import SECONDARY_INDEX_PREFIX
from hudi_ds.table_format import table_format


def check_timeline_writable(config: TableConfig) -> None:
    """Refuse to change the timeline of tables whose format this version does not write."""
    table_format(config)  # versions 6, 8 and 9 with their own layouts
    unmaintained = [p for p in config.metadata_partitions if config.version < 8 or (
        p not in MAINTAINED and not p.startswith(SECONDARY_INDEX_PREFIX))]
    if unmaintained:
        raise UnsupportedTableError(
            f"the table's metadata table holds {', '.join(unmaintained)} (hoodie.table.metadata.partitions="
            f"{','.join(config.metadata_partitions)}), which hudi_ds does not maintain"
            + (" on a version 6 table" if config.version < 8 else "")
            + "; writing would leave readers that use it (Apache Hudi, hudi-rs on versions 8 and 9) stale. "
            "Drop the metadata table with a write with hoodie.metadata.enable=false (as Apache Hudi's writers do; "
            "readers then list files)" + (", then enable it again on a version 8/9 table (hoodie.metadata.enable="
                                           "true) to get the files partition back" if config.version >= 8 else ""))
    config.merge_ordering_field()  # a merger hudi_ds does not have (CUSTOM) is refused by name


def check_writable(config: TableConfig) -> None:
    """Refuse tables this version cannot write data into without corrupting them for other engines."""
    check_timeline_writable(config)
    check_index_writable(config)
