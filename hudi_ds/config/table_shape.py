"""A table's shape from options: the configuration a first write creates, and the check that options given
for an existing table agree with it. HudiTable.create, Spark batch writes and the streaming sink all use it,
so a setting is checked the same way whichever door it comes through."""

from __future__ import annotations

from typing import Any

from hudi_ds.config.merge_mode import (
    DMS_DELETE_FIELD,
    DMS_DELETE_MARKER,
    DMS_PAYLOAD,
    FIRST_VALUE_PAYLOAD,
    PARTIAL_PAYLOADS,
    payload_class_name,
)
from hudi_ds.config.option_parsing import OPTION_SPECS, default_table_name
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig, key_generator_type_name
from hudi_ds.errors import ConfigError, TableExistsError
from hudi_ds.index.choice import write_index
from hudi_ds.keys.keygen import key_generator_class
from hudi_ds.keys.partition_scheme import TIMESTAMP_KEY_GENERATOR, timestamp_partitions, timestamp_settings
from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.table_format import format_for

# (option field, HudiTable.create keyword, TableConfig attribute): the settings fixed when a table is created
TABLE_SETTINGS: tuple[tuple[str, str, str], ...] = (
    ("record_key", "record_key", "record_key_fields"),
    ("partition_fields", "partition_by", "partition_fields"),
    ("ordering_field", "ordering_field", "ordering_field"),
    ("table_type", "table_type", "table_type"),
    ("num_buckets", "buckets", "num_buckets"),
    ("hive_style", "hive_style_partitioning", "hive_style"),
    ("url_encode", "url_encode_partitions", "url_encode"),
    ("table_name", "table_name", "name"),
    ("cdc_enabled", "options", "cdc_enabled"),
    ("cdc_mode", "options", "cdc_mode"),
    ("populate_meta_fields", "options", "populate_meta_fields"),
)


def new_table_config(opts: HudiOptions, path: str) -> TableConfig:
    """The hoodie.properties of a new table (its index: hoodie.index.type) at hoodie.write.table.version; key-less
    without a record key."""
    keys, parts = list(opts.record_key), list(opts.partition_fields)
    if opts.ordering_field and not keys:
        raise ConfigError(
            f"ordering_field {opts.ordering_field!r} needs a record key (hoodie.datasource.write.precombine.field "
            "without hoodie.datasource.write.recordkey.field): rows of a table without one are never merged; drop "
            "the ordering field or set a record key")
    bucket = opts.index_type == "BUCKET"
    if not bucket and opts.is_set("num_buckets"):
        raise ConfigError(
            f"hoodie.bucket.index.num.buckets={opts.num_buckets} is a setting of the bucket index, but "
            f"hoodie.index.type={opts.index_type}; drop one of them")
    if not opts.populate_meta_fields:
        check_virtual_keys(opts.table_type, keys)
    fmt = format_for(opts.table_version)
    partial = opts.requested_partial_update_mode() or "NONE"
    _check_partial_updates(partial, opts, fmt.version)
    delete_field, delete_marker = _delete_marker(opts, fmt.version)
    key_generator, raw = key_generator_class(keys, parts), {}
    if opts.keygen_class and key_generator_type_name(opts.keygen_class) == "TIMESTAMP":
        key_generator, raw = TIMESTAMP_KEY_GENERATOR, timestamp_settings(opts)
    if opts.payload_class == FIRST_VALUE_PAYLOAD:
        _check_first_value(opts, partial)
        raw = {**raw, "hoodie.compaction.payload.class": FIRST_VALUE_PAYLOAD}
    config = TableConfig(
        version=fmt.version, layout_version=fmt.layout,
        name=opts.table_name or default_table_name(path), table_type=opts.table_type, record_key_fields=keys,
        ordering_field=opts.ordering_field, partition_fields=parts, key_generator=key_generator, raw=raw,
        hive_style=opts.hive_style, url_encode=opts.url_encode, num_buckets=opts.num_buckets if bucket else None,
        index_type=opts.index_type,
        timezone="UTC", database="default", cdc_enabled=opts.cdc_enabled, cdc_mode=opts.cdc_mode,
        merge_mode=opts.requested_merge_mode() or "", partial_update_mode=partial,
        partial_update_marker=opts.partial_update_marker, delete_field=delete_field, delete_marker=delete_marker,
        populate_meta_fields=opts.populate_meta_fields,
    )
    timestamp_partitions(config)  # settings a timestamp-based key generator cannot follow are refused now
    return config


def _delete_marker(opts: HudiOptions, version: int) -> tuple[str | None, str | None]:
    """The custom delete marker a new table records: version 9 stores the options' (as Apache Hudi 1.1 does), any
    version the AWSDmsAvroPayload's Op=D; on versions 6 and 8 other markers stay settings of each write."""
    if opts.payload_class is not None and payload_class_name(opts.payload_class) == DMS_PAYLOAD:
        if opts.delete_field is not None and (opts.delete_field, opts.delete_marker) != (DMS_DELETE_FIELD,
                                                                                          DMS_DELETE_MARKER):
            raise ConfigError(
                f"hoodie.payload.delete.field={opts.delete_field} / marker={opts.delete_marker} contradict "
                f"AWSDmsAvroPayload, whose deletes are {DMS_DELETE_FIELD}={DMS_DELETE_MARKER}; drop one of them")
        return DMS_DELETE_FIELD, DMS_DELETE_MARKER
    if version >= 9:
        return opts.delete_field, opts.delete_marker
    return None, None


def check_virtual_keys(table_type: str, keys: list[str]) -> None:
    """Virtual keys (hoodie.populate.meta.fields=false) where every reader still merges: copy-on-write tables
    with a record key."""
    if table_type == "MERGE_ON_READ":
        raise ConfigError(
            "hoodie.populate.meta.fields=false (virtual keys) on a MERGE_ON_READ table: its base files would hold "
            "no record keys, and hudi-rs then reads the table as append-only (log updates and deletes are not "
            "merged into the base rows). Use hoodie.datasource.write.table.type=COPY_ON_WRITE, or keep the meta "
            "fields (hoodie.populate.meta.fields=true)")
    if not keys:
        raise ConfigError(
            "hoodie.populate.meta.fields=false (virtual keys) without a record key: the generated keys of a table "
            f"without one live only in the {RECORD_KEY} column. Set hoodie.datasource.write.recordkey.field, "
            "or keep the meta fields (hoodie.populate.meta.fields=true)")


def _check_first_value(opts: HudiOptions, partial: str) -> None:
    """FirstValueAvroPayload compares ordering values and replaces whole rows."""
    if not opts.ordering_field:
        raise ConfigError(
            "hoodie.datasource.write.payload.class=FirstValueAvroPayload keeps the first of versions with equal "
            "ordering values, but no ordering field is set: set hoodie.datasource.write.precombine.field")
    if partial != "NONE":
        raise ConfigError(
            f"hoodie.table.partial.update.mode={partial} with FirstValueAvroPayload: that payload replaces whole "
            "rows (Apache Hudi has no partial updates for it); drop one of them")


def _check_partial_updates(mode: str, opts: HudiOptions, version: int) -> None:
    """Partial update modes a new table of `version` can record, as Apache Hudi does: all of them on version 9,
    IGNORE_DEFAULTS as a payload class on version 6, none on version 8."""
    if mode == "NONE" or version == 9 or (version == 6 and opts.payload_class in PARTIAL_PAYLOADS):
        pass
    elif version == 6 and mode == "IGNORE_DEFAULTS":
        raise ConfigError(
            "hoodie.table.partial.update.mode=IGNORE_DEFAULTS on a version 6 table is its payload class: set "
            "hoodie.datasource.write.payload.class=PartialUpdateAvroPayload (event time) or "
            "OverwriteNonDefaultsWithLatestAvroPayload (commit time), or hoodie.write.table.version=9")
    else:
        raise ConfigError(
            f"hoodie.table.partial.update.mode={mode} needs table version 9 (Apache Hudi 1.1); version {version} "
            "tables have no such mode: set hoodie.write.table.version=9")
    if (mode == "IGNORE_MARKERS") != (opts.partial_update_marker is not None):
        raise ConfigError(
            "hoodie.write.partial.update.custom.marker goes with hoodie.table.partial.update.mode=IGNORE_MARKERS "
            "(the marker says which cells a write leaves as they are): set both or neither")


def _show(value: Any) -> Any:
    return ",".join(value) if isinstance(value, list) else value


def _merge_settings(opts: HudiOptions) -> str:
    keys = {s.name: s.key for s in OPTION_SPECS}
    return ", ".join(f"{keys[name]}={getattr(opts, name)}" for name in ("merge_mode", "payload_class",
                                                                       "merge_strategy_id")
                     if getattr(opts, name) is not None)


def check_against_table(opts: HudiOptions, config: TableConfig, path: str) -> None:
    """Table settings the options set must match the existing table's; the error names both values."""
    if opts.record_key and not config.record_key_fields:
        raise TableExistsError(
            f"hoodie.datasource.write.recordkey.field (record_key)={','.join(opts.record_key)!r} but the existing "
            f"table at {path} has no record key (its rows get generated keys; the key is fixed when a table is "
            "created); drop the option, or write to a new table to get one with a record key")
    partial = opts.requested_partial_update_mode()
    if partial is not None and partial != config.partial_update_mode:
        raise TableExistsError(
            f"hoodie.table.partial.update.mode={partial} contradicts the existing table at {path}, which has "
            f"{config.partial_update_mode} (fixed when a table is created); drop the setting or choose another path")
    if config.delete_field is not None and opts.delete_field is not None and (
            (opts.delete_field, opts.delete_marker) != (config.delete_field, config.delete_marker)):
        raise TableExistsError(
            f"hoodie.payload.delete.field={opts.delete_field} / hoodie.payload.delete.marker={opts.delete_marker} "
            f"contradict the existing table at {path}, whose deletes are marked by {config.delete_field}="
            f"{config.delete_marker} (fixed when a table is created); drop the settings or choose another path")
    requested = opts.requested_merge_mode()
    if requested is not None and requested != config.merge_mode:
        raise TableExistsError(
            f"the merge settings ({_merge_settings(opts)}) ask for {requested} but the existing table at {path} "
            f"merges with {config.merge_mode} (fixed when a table is created); drop them or choose another path")
    keys = {s.name: s.key for s in OPTION_SPECS}
    write_index(config, opts)  # the index named must be the one the table records
    for field, keyword, attribute in TABLE_SETTINGS:
        given, have = getattr(opts, field), getattr(config, attribute)
        if field == "cdc_mode" and not config.cdc_enabled:
            continue  # a table without change data records no mode (as Hudi): any mode given with it is moot
        if opts.is_set(field) and given != have:
            raise TableExistsError(
                f"{keys[field]}={_show(given)!r} contradicts the existing table at {path}, which has "
                f"{_show(have)!r} ({keyword}); drop the setting or set it to {_show(have)!r} (it is fixed when a "
                "table is created), or choose another path")
