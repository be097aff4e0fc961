"""The table's own configuration (hoodie.properties) as a validated, immutable record. A plain dataclass: every
read builds one, and pydantic's first model costs a fresh process more than the rest of the read setup (issue 32)."""

from __future__ import annotations

import zlib
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Literal, get_args

from hudi_ds.config import properties
from hudi_ds.config.merge_mode import (
    DMS_DELETE_FIELD,
    DMS_DELETE_MARKER,
    DMS_PAYLOAD,
    EVENT_TIME,
    FIRST_VALUE_PAYLOAD,
    PARTIAL_PAYLOADS,
    PAYLOAD_BASED_MERGER_ID,
    infer_merge_mode,
    is_first_value,
    payload_class_name,
    payload_of,
    require_known,
    strategy_of,
)
from hudi_ds.errors import CorruptTableError, TableNotFoundError
from hudi_ds.merge.partial import FILL_DEFAULTS, IGNORE_DEFAULTS, PARTIAL_UPDATE_MODES, PartialUpdate
from hudi_ds.schema.meta import META_COLUMNS
from hudi_ds.storage.layout import HOODIE_DIR, PROPS_PATH
from hudi_ds.timeline.instant import parse_instant_file_name

if TYPE_CHECKING:
    from hudi_ds.storage import Storage
    from hudi_ds.table_format import TableFormat

TableType = Literal["MERGE_ON_READ", "COPY_ON_WRITE"]
PARTIAL_UPDATE_MODE = "hoodie.table.partial.update.mode"
# the marker is a merge property of the table (HoodieTableConfig.MERGE_CUSTOM_PROPERTY_PREFIX + the write key)
PARTIAL_UPDATE_MARKER = "hoodie.record.merge.property.hoodie.write.partial.update.custom.marker"
# version 9: the custom delete marker (DefaultHoodieRecordPayload's delete field and value) as table properties
DELETE_FIELD = "hoodie.record.merge.property.hoodie.payload.delete.field"
DELETE_MARKER = "hoodie.record.merge.property.hoodie.payload.delete.marker"


def _split(value: str | None) -> list[str]:
    if not value:
        return []
    # v8 CustomKeyGenerator may suffix partition fields with ':SIMPLE' / ':TIMESTAMP'
    return [part.split(":")[0].strip() for part in value.split(",") if part.strip()]


# Apache Hudi 0.13's names of the supplemental logging modes, still accepted by Hudi
LEGACY_CDC_MODES = {"CDC_OP_KEY": "OP_KEY_ONLY", "CDC_DATA_BEFORE": "DATA_BEFORE",
                    "CDC_DATA_BEFORE_AFTER": "DATA_BEFORE_AFTER", "OP_KEY": "OP_KEY_ONLY",
                    "WITH_BEFORE": "DATA_BEFORE", "WITH_BEFORE_AFTER": "DATA_BEFORE_AFTER"}


def _cdc_mode(value: str | None) -> str:
    """The supplemental logging mode under its current name (Hudi 0.13 wrote cdc_op_key, cdc_data_before, ...)."""
    mode = (value or "DATA_BEFORE_AFTER").strip().upper()
    mode = LEGACY_CDC_MODES.get(mode, mode)
    if mode not in ("OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"):
        raise ValueError(f"unknown hoodie.table.cdc.supplemental.logging.mode {value!r}")
    return mode


# Apache Hudi's own key generator classes (KeyGeneratorType) by the hoodie.table.keygenerator.type hudi_ds
# records for them; an Avro variant builds the same keys as its Spark one
_HUDI_KEYGEN = "org.apache.hudi.keygen."
_SQL_KEYGEN = "org.apache.spark.sql.hudi.command."
_KEY_GENERATOR_TYPES = {
    **{_HUDI_KEYGEN + name + suffix: kind for name, kind in (
        ("Simple", "SIMPLE"), ("Complex", "COMPLEX"), ("TimestampBased", "TIMESTAMP"), ("Custom", "CUSTOM"),
        ("Nonpartitioned", "NON_PARTITION"), ("AutoRecordGenWrapper", "AUTO_RECORD"))
       for suffix in ("KeyGenerator", "AvroKeyGenerator")},
    _HUDI_KEYGEN + "GlobalDeleteKeyGenerator": "GLOBAL_DELETE",
    _HUDI_KEYGEN + "GlobalAvroDeleteKeyGenerator": "GLOBAL_DELETE",
    "org.apache.hudi.metadata.HoodieTableMetadataKeyGenerator": "HOODIE_TABLE_METADATA",
    _SQL_KEYGEN + "SqlKeyGenerator": "SPARK_SQL",
    _SQL_KEYGEN + "UuidKeyGenerator": "SPARK_SQL_UUID",
    _SQL_KEYGEN + "MergeIntoKeyGenerator": "SPARK_SQL_MERGE_INTO",
}
_KEY_GENERATOR_TYPE_NAMES = {*_KEY_GENERATOR_TYPES.values(), "USER_PROVIDED"}
_AVRO_VARIANTS = ("SIMPLE", "COMPLEX", "TIMESTAMP", "CUSTOM", "NON_PARTITION", "GLOBAL_DELETE", "AUTO_RECORD")


def key_generator_type_name(key_generator: str) -> str:
    """hoodie.table.keygenerator.type (v8+) of a key generator class or type name. A class Hudi does not ship is
    USER_PROVIDED (KeyGeneratorType.fromClassName), whatever its simple name: its keys are its own (issue 28)."""
    kind = _KEY_GENERATOR_TYPES.get(key_generator.strip())
    if kind is not None:
        return kind
    name = key_generator.strip().upper()
    name = name[: -len("_AVRO")] if name.endswith("_AVRO") else name
    return name if name in _KEY_GENERATOR_TYPE_NAMES else "USER_PROVIDED"


def recorded_key_generator_type(key_generator: str) -> str:
    """The hoodie.table.keygenerator.type Apache Hudi records for a class or type name (KeyGeneratorType's own
    name: an Avro class keeps its _AVRO variant, as Flink's tables have them), where key_generator_type_name gives
    the kind of keys it makes."""
    name = key_generator.strip()
    kind = key_generator_type_name(name)
    avro = name.endswith("AvroKeyGenerator") or name.upper().endswith("_AVRO")
    return f"{kind}_AVRO" if avro and kind in _AVRO_VARIANTS else kind


def table_checksum(database: str, name: str) -> str:
    return str(zlib.crc32(f"{database}.{name}".encode()))


@dataclass(frozen=True)
class TableConfig:
    """What every reader and writer of the table must agree on."""

    name: str
    table_type: TableType = "COPY_ON_WRITE"
    version: int = 6
    layout_version: int = 1
    record_key_fields: list[str] = field(default_factory=list)
    ordering_field: str | None = None
    partition_fields: list[str] = field(default_factory=list)
    key_generator: str | None = None
    hive_style: bool = False
    url_encode: bool = False
    populate_meta_fields: bool = True
    base_file_format: str = "PARQUET"
    database: str = ""
    timeline_path: str = "timeline"
    metadata_partitions: list[str] = field(default_factory=list)
    create_schema: str | None = None
    num_buckets: int | None = None
    index_type: str | None = None
    timezone: str = "LOCAL"
    drop_partition_columns: bool = False
    cdc_enabled: bool = False  # hoodie.table.cdc.enabled: writers persist change data (read/change_data.py)
    cdc_mode: str = "DATA_BEFORE_AFTER"  # hoodie.table.cdc.supplemental.logging.mode
    # hoodie.record.merge.mode, or what the payload class / strategy id mean (hudi_ds.config.merge_mode); CUSTOM
    # is kept so that reads and writes can refuse it by name. Unset: by the ordering field
    merge_mode: str = ""
    # hoodie.table.partial.update.mode (version 9), IGNORE_DEFAULTS for a version 6 partial-update payload
    partial_update_mode: str = "NONE"
    partial_update_marker: str | None = None  # hoodie.write.partial.update.custom.marker (IGNORE_MARKERS)
    # a column and the value of it that makes a row a delete (version 9 properties, or AWSDmsAvroPayload's Op=D)
    delete_field: str | None = None
    delete_marker: str | None = None
    raw: dict[str, str] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.table_type not in get_args(TableType):
            raise ValueError(f"unknown hoodie.table.type {self.table_type!r} (MERGE_ON_READ or COPY_ON_WRITE)")
        if not self.merge_mode:
            object.__setattr__(self, "merge_mode", infer_merge_mode(None, None, None, self.ordering_field, 6))

    @property
    def is_mor(self) -> bool:
        return self.table_type == "MERGE_ON_READ"

    @property
    def format(self) -> TableFormat:
        """The version-dependent rules of this table (timeline layout, metadata codec, log naming)."""
        from hudi_ds.table_format import table_format

        return table_format(self)

    def merge_ordering_field(self) -> str | None:
        """The field merges compare: the ordering field under event-time ordering, none under commit-time ordering
        (the later write wins). UnsupportedTableError for a merger hudi_ds does not have."""
        mode = require_known(self.merge_mode, self.payload_class, self._strategy_id)
        return self.ordering_field if mode == EVENT_TIME else None

    @property
    def first_value(self) -> bool:
        """FirstValueAvroPayload's rule: a version whose ordering value equals the current one's keeps the current
        (the stored record; in a batch, the earlier row), where DefaultHoodieRecordPayload takes the later."""
        return is_first_value(self.merge_mode, self.payload_class, self._strategy_id)

    @property
    def _strategy_id(self) -> str | None:
        return self.raw.get("hoodie.record.merge.strategy.id") or self.raw.get("hoodie.compaction.record.merger.strategy")

    def partial_update(self) -> PartialUpdate | None:
        """How versions of this table give cells, when they may give only some (hudi_ds.merge.partial)."""
        if self.partial_update_mode in ("NONE", FILL_DEFAULTS):
            return None
        fixed = [*META_COLUMNS, *self.record_key_fields, *self.partition_fields, *filter(None, [self.ordering_field])]
        return PartialUpdate(self.partial_update_mode, self.partial_update_marker, frozenset(fixed))

    @property
    def payload_class(self) -> str | None:
        return self.raw.get("hoodie.compaction.payload.class") or self.raw.get("hoodie.legacy.payload.class")

    @property
    def timeline_dir(self) -> str:
        return ".hoodie" if self.layout_version < 2 else f".hoodie/{self.timeline_path}"

    @property
    def uses_timestamp_keygen(self) -> bool:
        kg = (self.key_generator or "").upper()
        return "TIMESTAMP" in kg or "CUSTOM" in kg

    @classmethod
    def from_properties(cls, props: dict[str, str], path: str = PROPS_PATH) -> TableConfig:
        def flag(key: str, default: bool) -> bool:
            return props.get(key, str(default)).strip().lower() == "true"

        try:
            name = props["hoodie.table.name"]
            ordering = props.get("hoodie.table.ordering.fields") or props.get("hoodie.table.precombine.field")
            buckets = props.get("hoodie.bucket.index.num.buckets")
            version = int(props.get("hoodie.table.version", "0"))
            strategy = props.get("hoodie.record.merge.strategy.id") or props.get("hoodie.compaction.record.merger.strategy")
            payload = props.get("hoodie.compaction.payload.class") or props.get("hoodie.legacy.payload.class")
            partial = (props.get(PARTIAL_UPDATE_MODE) or "NONE").strip().upper() if version >= 9 else "NONE"
            if version < 8 and payload and payload_class_name(payload) in PARTIAL_PAYLOADS:
                partial = IGNORE_DEFAULTS
            if partial not in PARTIAL_UPDATE_MODES:
                raise ValueError(f"unknown {PARTIAL_UPDATE_MODE} {partial!r}")
            delete_field, delete_marker = _delete_marker(props, payload, version)
            return cls(
                name=name,
                table_type=props.get("hoodie.table.type", "COPY_ON_WRITE").upper(),  # type: ignore[arg-type]
                version=version,
                layout_version=int(props.get("hoodie.timeline.layout.version", "1")),
                record_key_fields=_split(props.get("hoodie.table.recordkey.fields")),
                ordering_field=next(iter(_split(ordering)), None),
                partition_fields=_split(props.get("hoodie.table.partition.fields")),
                key_generator=props.get("hoodie.table.keygenerator.class")
                or props.get("hoodie.table.keygenerator.type"),
                hive_style=flag("hoodie.datasource.write.hive_style_partitioning", False),
                url_encode=flag("hoodie.datasource.write.partitionpath.urlencode", False),
                populate_meta_fields=flag("hoodie.populate.meta.fields", True),
                base_file_format=props.get("hoodie.table.base.file.format", "PARQUET").upper(),
                database=props.get("hoodie.database.name", ""),
                timeline_path=props.get("hoodie.timeline.path", "timeline"),
                metadata_partitions=_split(props.get("hoodie.table.metadata.partitions")),
                create_schema=props.get("hoodie.table.create.schema"),
                num_buckets=int(buckets) if buckets else None,
                index_type=props.get("hoodie.index.type"),
                timezone=props.get("hoodie.table.timeline.timezone", "LOCAL"),
                drop_partition_columns=flag("hoodie.datasource.write.drop.partition.columns", False),
                cdc_enabled=flag("hoodie.table.cdc.enabled", False),
                cdc_mode=_cdc_mode(props.get("hoodie.table.cdc.supplemental.logging.mode")),
                merge_mode=infer_merge_mode(props.get("hoodie.record.merge.mode"), payload, strategy,
                                            next(iter(_split(ordering)), None), version),
                partial_update_mode=partial, partial_update_marker=props.get(PARTIAL_UPDATE_MARKER),
                delete_field=delete_field, delete_marker=delete_marker,
                raw=dict(props),
            )
        except (KeyError, ValueError) as exc:
            raise CorruptTableError(
                f"{path} is not a valid hoodie.properties ({type(exc).__name__}: {exc}); "
                "restore it from .hoodie/hoodie.properties.backup or recreate the table"
            ) from exc

    @classmethod
    def parse(cls, data: bytes, path: str = PROPS_PATH) -> TableConfig:
        text = properties.decode_bytes(data)
        props = properties.loads(text)
        if "hoodie.table.name" not in props:
            raise CorruptTableError(
                f"{path} has no hoodie.table.name: the file is garbled or empty; restore it from "
                ".hoodie/hoodie.properties.backup or recreate the table"
            )
        stored = props.get("hoodie.table.checksum")
        expected = table_checksum(props.get("hoodie.database.name", ""), props["hoodie.table.name"])
        if stored is not None and stored.strip() != expected:
            raise CorruptTableError(
                f"{path} fails its checksum (hoodie.table.checksum={stored}, the table name and database give "
                f"{expected}): it was edited by hand or damaged; restore it from .hoodie/hoodie.properties.backup")
        return cls.from_properties(props, path)

    def to_properties(self) -> dict[str, str]:
        """The properties a table written by hudi_ds carries at its version (hudi-format.md §1.3; for versions 8
        and 9 as Apache Hudi 1.0 / 1.1 write them, see the reference tables)."""
        props: dict[str, str] = {
            "hoodie.table.name": self.name,
            "hoodie.table.type": self.table_type,
            "hoodie.table.version": str(self.version),
            "hoodie.timeline.layout.version": str(self.layout_version),
            "hoodie.table.recordkey.fields": ",".join(self.record_key_fields),
            "hoodie.table.partition.fields": ",".join(self.partition_fields),
            "hoodie.datasource.write.hive_style_partitioning": str(self.hive_style).lower(),
            "hoodie.datasource.write.partitionpath.urlencode": str(self.url_encode).lower(),
            "hoodie.datasource.write.drop.partition.columns": "false",
            "hoodie.populate.meta.fields": str(self.populate_meta_fields).lower(),
            "hoodie.table.base.file.format": self.base_file_format,
            "hoodie.archivelog.folder": "archived",
            "hoodie.table.timeline.timezone": "UTC",
            "hoodie.database.name": self.database,
        }
        # the merge mode as Apache Hudi 1.x writes it at each version (inferCorrectMergingBehavior): versions 6 and
        # 8 carry the payload class and strategy id of the mode, version 9 the mode alone
        mode = require_known(self.merge_mode, self.payload_class, self._strategy_id)
        if self.version >= 8:
            props.update({
                "hoodie.table.initial.version": self.raw.get("hoodie.table.initial.version", str(self.version)),
                "hoodie.timeline.path": self.timeline_path,
                "hoodie.timeline.history.path": self.raw.get("hoodie.timeline.history.path", "history"),
                "hoodie.record.merge.mode": self.merge_mode if self.first_value else mode,
            })
            if self.version == 8:  # Hudi 1.1 drops the strategy id of the built-in modes (EightToNineUpgradeHandler)
                props["hoodie.record.merge.strategy.id"] = strategy_of(mode)
                props["hoodie.compaction.payload.class"] = self._payload(mode)
            else:
                props["hoodie.table.format"] = "native"
            if self.first_value:  # a payload-run CUSTOM mode at versions 8 and 9 (inferMergingConfigsForV9TableCreation)
                props["hoodie.record.merge.strategy.id"] = PAYLOAD_BASED_MERGER_ID
                props["hoodie.compaction.payload.class"] = FIRST_VALUE_PAYLOAD
            if self.version == 9 and self.partial_update_mode != "NONE":
                props[PARTIAL_UPDATE_MODE] = self.partial_update_mode
                if self.partial_update_marker is not None:
                    props[PARTIAL_UPDATE_MARKER] = self.partial_update_marker
            if self.version == 9 and self.delete_field is not None and self.delete_marker is not None:
                props[DELETE_FIELD], props[DELETE_MARKER] = self.delete_field, self.delete_marker
        else:
            props["hoodie.compaction.payload.class"] = self._payload(mode)
            props["hoodie.compaction.record.merger.strategy"] = strategy_of(mode)
        if self.key_generator:
            if self.version >= 8:
                kind = recorded_key_generator_type(self.key_generator)
                props["hoodie.table.keygenerator.type"] = kind
                if kind == "USER_PROVIDED":  # Hudi finds such a class by its name alone
                    props["hoodie.table.keygenerator.class"] = self.key_generator
            else:
                props["hoodie.table.keygenerator.class"] = self.key_generator
        # a timestamp-based key generator's settings, as Apache Hudi 1.x keeps them in the table's properties
        props.update({k: v for k, v in self.raw.items() if k.startswith("hoodie.keygen.timebased.")})
        if self.ordering_field:
            key = "hoodie.table.ordering.fields" if self.version >= 9 else "hoodie.table.precombine.field"
            props[key] = self.ordering_field
        if self.create_schema:
            props["hoodie.table.create.schema"] = self.create_schema
        if self.num_buckets:
            props["hoodie.index.type"] = "BUCKET"
            props["hoodie.bucket.index.num.buckets"] = str(self.num_buckets)
        elif self.index_type:
            props["hoodie.index.type"] = self.index_type
        if not self.record_key_fields:
            del props["hoodie.table.recordkey.fields"]
        if self.cdc_enabled:
            props["hoodie.table.cdc.enabled"] = "true"
            props["hoodie.table.cdc.supplemental.logging.mode"] = self.cdc_mode
        props["hoodie.table.checksum"] = table_checksum(self.database, self.name)
        return props

    def _payload(self, mode: str) -> str:
        """The payload class versions 6 and 8 record for the mode (AWSDmsAvroPayload for its Op=D deletes)."""
        if self.first_value:
            return FIRST_VALUE_PAYLOAD
        if mode != EVENT_TIME and (self.delete_field, self.delete_marker) == (DMS_DELETE_FIELD, DMS_DELETE_MARKER):
            return DMS_PAYLOAD
        return payload_of(mode, self.partial_update_mode == IGNORE_DEFAULTS)

    def to_bytes(self) -> bytes:
        return properties.dumps(self.to_properties(), "Properties saved by hudi_ds").encode("latin-1", "backslashreplace")


def _delete_marker(props: dict[str, str], payload: str | None, version: int) -> tuple[str | None, str | None]:
    """The table's custom delete marker: version 9 records it (HoodieTableMetaClient), an AWSDmsAvroPayload table
    has Op=D (its payload's rule)."""
    field, marker = (props.get(DELETE_FIELD), props.get(DELETE_MARKER)) if version >= 9 else (None, None)
    if (field is None) != (marker is None):
        raise ValueError(f"{DELETE_FIELD} and {DELETE_MARKER} go together, but only one is set")
    if field is None and payload and payload_class_name(payload) == DMS_PAYLOAD:
        field, marker = DMS_DELETE_FIELD, DMS_DELETE_MARKER
    return field, marker


def load_config(storage: Storage) -> TableConfig:
    """The table's hoodie.properties; TableNotFoundError when the path holds no table."""
    try:
        data = storage.read_bytes(PROPS_PATH)
    except NotADirectoryError:
        raise TableNotFoundError(f"{storage.uri} is a file, not a table folder; give the folder of a Hudi table") from None
    except FileNotFoundError:
        lost_properties(storage)
        raise TableNotFoundError(
            f"{storage.uri} is not a Hudi table: {PROPS_PATH} does not exist; create one with "
            "HudiTable.create(path, table_name=..., record_key=...)"
        ) from None
    return TableConfig.parse(data, storage.full(PROPS_PATH))


def has_instants(storage: Storage) -> bool:
    """Whether the timeline folder (either layout) holds instant files."""
    return any(parse_instant_file_name(e.name, layout) is not None
               for layout, folder in ((1, HOODIE_DIR), (2, f"{HOODIE_DIR}/timeline")) for e in storage.list(folder))


def lost_properties(storage: Storage) -> None:
    """CorruptTableError when hoodie.properties is gone but the timeline is not: creating the table again could
    change its bucket count and duplicate keys."""
    if has_instants(storage):
        raise CorruptTableError(
            f"{storage.uri}/{PROPS_PATH} is missing but the timeline holds commits: the table's settings are "
            "lost. Restore hoodie.properties (Apache Hudi keeps a copy in .hoodie/hoodie.properties.backup); "
            "creating the table again could change its bucket count and duplicate keys")
