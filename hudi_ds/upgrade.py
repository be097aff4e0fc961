"""Table versions over a table's life: which version a write keeps, upgrades (6 -> 8 -> 9) and downgrades.

Apache Hudi's rule (`hoodie.write.table.version`, `hoodie.write.auto.upgrade`): an existing table is written at
its own version; a writer asking for a higher one upgrades it first when auto-upgrade is on, and keeps the table's
version when it is off; asking for a lower one is an error (downgrades are explicit).
"""

from __future__ import annotations

from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import ConfigError
from hudi_ds.storage import Storage


def check_version(storage: Storage, opts: HudiOptions, config: TableConfig) -> TableConfig:
    """The table config a write proceeds with: the table as it is, or upgraded to the version `opts` asks for."""
    if not opts.is_set("table_version") or opts.table_version == config.version:
        return config
    if opts.table_version < config.version:
        raise ConfigError(
            f"hoodie.write.table.version={opts.table_version} but the table at {storage.uri} is version "
            f"{config.version}; a write never downgrades a table. Drop the option, or downgrade the table first: "
            f"hudi-py downgrade {storage.uri} --to {opts.table_version}")
    if not opts.auto_upgrade:
        return config  # Hudi keeps the table's version when auto-upgrade is off
    return upgrade(storage, config, opts.table_version)
