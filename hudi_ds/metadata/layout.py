"""Where the metadata table lives and how its own files are named: `.hoodie/metadata/`, a merge-on-read Hudi table
of its own (hoodie.properties, timeline, one folder per metadata partition), as Apache Hudi 1.x lays it out.

hudi_ds maintains its `files` partition: one file group `files-0000-0`, a log file per deltacommit
(`.files-0000-0_<instant>.log.1_0-0-0`, one HFILE_DATA block) and HFile base files from its compactions
(`files-0000-0_0-0-0_<instant>.hfile`). Its hoodie.properties are the ones Hudi's HoodieTableMetaClient writes
for a metadata table (see the reference tables). The data table's `hoodie.table.metadata.partitions` lists the
partitions readers may use; a metadata table not listed there is not in use (a bootstrap killed before it
finished), and is rebuilt.
"""

from __future__ import annotations

from dataclasses import dataclass

from hudi_ds.config import properties
from hudi_ds.config.table_config import table_checksum
from hudi_ds.errors import CorruptTableError
from hudi_ds.files.naming import PARTITION_METAFILE, log_file_name
from hudi_ds.metadata.records import COLUMN_STATS, FILES, PARTITION_STATS, RECORD_INDEX
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import HOODIE_DIR, PROPS_PATH
from hudi_ds.storage.sub import SubStorage
from hudi_ds.table_format import TableFormat, format_for
from hudi_ds.timeline import Timeline

METADATA_DIR = f"{HOODIE_DIR}/metadata"
PARTITIONS_KEY = "hoodie.table.metadata.partitions"  # in the data table's hoodie.properties
FILES_FILE_ID = "files-0000-0"
WRITE_TOKEN = "0-0-0"
# The bootstrap's deltacommit: Hudi's SOLO_COMMIT_TIMESTAMP with the partition's index (files = 000). Readers take
# the metadata table's own instants of this prefix as valid though the data timeline has no such instant.
INIT_INSTANT = "00000000000000000"
INIT_PREFIX = "00000000000000"
MAINTAINED = (FILES, COLUMN_STATS, PARTITION_STATS, RECORD_INDEX)  # the metadata partitions hudi_ds keeps up to date


def is_init_instant(instant: str) -> bool:
    return instant.startswith(INIT_PREFIX)


def log_name(instant: str) -> str:
    """The log file the deltacommit `instant` writes into the files partition."""
    return log_file_name(FILES_FILE_ID, instant, 1, WRITE_TOKEN)


def base_name(instant: str) -> str:
    """The HFile base file a bootstrap or compaction at `instant` writes."""
    return f"{FILES_FILE_ID}_{WRITE_TOKEN}_{instant}.hfile"


def metadata_properties(table_name: str, version: int) -> dict[str, str]:
    """hoodie.properties of the metadata table of a version 8/9 data table named `table_name`."""
    name = f"{table_name}_metadata"
    return {
        "hoodie.compaction.payload.class": "org.apache.hudi.metadata.HoodieMetadataPayload",
        "hoodie.table.initial.version": str(version),
        "hoodie.table.keygenerator.type": "HOODIE_TABLE_METADATA",
        "hoodie.table.type": "MERGE_ON_READ",
        "hoodie.archivelog.folder": "history",
        "hoodie.timeline.layout.version": "2",
        "hoodie.timeline.history.path": "history",
        "hoodie.table.checksum": table_checksum("", name),
        "hoodie.datasource.write.drop.partition.columns": "false",
        "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000",
        "hoodie.table.recordkey.fields": "key",
        "hoodie.table.name": name,
        "hoodie.timeline.path": "timeline",
        "hoodie.populate.meta.fields": "false",
        "hoodie.table.base.file.format": "HFILE",
        "hoodie.record.merge.mode": "CUSTOM",
        "hoodie.table.version": str(version),
    }


def partition_metafile(instant: str) -> bytes:
    """`.hoodie_partition_metadata` of a metadata partition (depth 1), as Hudi writes it."""
    return f"#partition metadata\ncommitTime={instant}\npartitionDepth=1\n".encode()


def listed_partitions(data_storage: Storage) -> list[str]:
    """The metadata partitions the data table's hoodie.properties says readers may use (read afresh: another
    writer may have created or dropped the metadata table since this one loaded the table)."""
    props = properties.loads(properties.decode_bytes(data_storage.read_bytes(PROPS_PATH)))
    return [p.strip() for p in props.get(PARTITIONS_KEY, "").split(",") if p.strip()]


@dataclass(frozen=True)
class MetadataTable:
    """An existing metadata table: its storage (paths relative to `.hoodie/metadata`) and its format."""

    storage: Storage
    version: int
    fmt: TableFormat

    @classmethod
    def open(cls, data_storage: Storage) -> MetadataTable:
        storage = SubStorage(data_storage, METADATA_DIR)
        where = storage.full(PROPS_PATH)
        try:
            props = properties.loads(properties.decode_bytes(storage.read_bytes(PROPS_PATH)))
        except FileNotFoundError:
            raise CorruptTableError(
                f"{where} is missing though the table's hoodie.properties lists metadata partitions: drop the "
                "metadata table (a write with hoodie.metadata.enable=false) and enable it again") from None
        try:
            version = int(props["hoodie.table.version"])
            fmt = format_for(version, props.get("hoodie.timeline.path", "timeline"),
                             props.get("hoodie.timeline.history.path", "history"))
        except (KeyError, ValueError) as exc:
            raise CorruptTableError(f"{where}: no usable hoodie.table.version ({exc}); drop the metadata table "
                                    "(a write with hoodie.metadata.enable=false) and enable it again") from None
        if fmt.layout < 2:
            raise CorruptTableError(f"{where}: a version {version} metadata table; hudi_ds maintains the metadata "
                                    "tables of version 8 and 9 tables only")
        return cls(storage, version, fmt)

    def timeline(self) -> Timeline:
        return self.fmt.load_timeline(self.storage)

    def ensure_partition(self, instant: str) -> None:
        rel = f"{FILES}/{PARTITION_METAFILE}"
        if not self.storage.exists(rel):
            self.storage.put_if_absent(rel, partition_metafile(instant))


def metadata_table_of(data_storage: Storage) -> MetadataTable | None:
    """The data table's metadata table, when its hoodie.properties (read afresh) says readers use its files
    partition."""
    if FILES not in listed_partitions(data_storage):
        return None
    return MetadataTable.open(data_storage)
