"""Configuration: the table's hoodie.properties and the options users pass."""

from hudi_ds.config.table_config import TableConfig

__all__ = ["TableConfig"]
