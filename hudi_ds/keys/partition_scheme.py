"""Which partition fields a table's key generator formats as timestamps: TimestampBasedKeyGenerator its one
partition field, CustomKeyGenerator those its `field:TIMESTAMP` entries name (`field:SIMPLE` ones are plain values);
both read the `hoodie.keygen.timebased.*` settings of hoodie.properties (hudi_ds.keys.timestamp_partition)."""

from __future__ import annotations

import dataclasses

from hudi_ds.config.option_parsing import OPTION_SPECS
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig, key_generator_type_name
from hudi_ds.errors import ConfigError, TableExistsError
from hudi_ds.keys.timestamp_partition import PREFIX, TimestampPartition

TIMESTAMP_KEY_GENERATOR = "org.apache.hudi.keygen.TimestampBasedKeyGenerator"
PARTITION_FIELDS = "hoodie.table.partition.fields"
WRITE_PARTITION_FIELDS = "hoodie.datasource.write.partitionpath.field"


def _custom_kinds(config: TableConfig) -> dict[str, str]:
    """field -> SIMPLE or TIMESTAMP from the `field:type` list hoodie.properties keeps (Hudi 1.x writes it in
    hoodie.table.partition.fields; older tables may hold the writer's hoodie.datasource.write.partitionpath.field)."""
    typed = [t for t in (config.raw.get(PARTITION_FIELDS), config.raw.get(WRITE_PARTITION_FIELDS)) if t and ":" in t]
    if not typed:
        raise ConfigError(
            f"the table's CustomKeyGenerator partition fields {config.raw.get(PARTITION_FIELDS)!r} do not say each "
            f"field's type; Apache Hudi takes them from the writer's {WRITE_PARTITION_FIELDS} "
            "('field:SIMPLE,field2:TIMESTAMP'): add that setting, as the table's writers had it, to "
            ".hoodie/hoodie.properties")
    entries = [e.strip() for e in typed[0].split(",") if e.strip()]
    kinds = {}
    for entry in entries:
        field, _, kind = entry.partition(":")
        kind = kind.strip().upper()
        if kind not in ("SIMPLE", "TIMESTAMP"):
            raise ConfigError(f"partition field {entry!r}: CustomKeyGenerator takes the types SIMPLE and TIMESTAMP, "
                              f"not {kind!r}; fix the table's partition fields setting")
        kinds[field.strip()] = kind
    return kinds


def timestamp_partitions(config: TableConfig) -> dict[str, TimestampPartition]:
    """The partition fields whose values the table's key generator formats as timestamps, and how."""
    kind = key_generator_type_name(config.key_generator) if config.key_generator else None
    if kind == "TIMESTAMP":
        if len(config.partition_fields) != 1:
            raise ConfigError(
                f"TimestampBasedKeyGenerator makes the partition path of one field; the table names "
                f"{config.partition_fields}: use CustomKeyGenerator ('field:TIMESTAMP,...') for several")
        return {config.partition_fields[0]: TimestampPartition.of(config.raw)}
    if kind == "CUSTOM":
        fields = [f for f, k in _custom_kinds(config).items() if k == "TIMESTAMP"]
        return {f: TimestampPartition.of(config.raw) for f in fields}
    return {}


def timestamp_settings(options: HudiOptions) -> dict[str, str]:
    """The `hoodie.keygen.timebased.*` settings the options set, by their Hudi keys."""
    return {spec.key: str(getattr(options, spec.name)) for spec in OPTION_SPECS
            if spec.key.startswith(PREFIX) and options.is_set(spec.name) and getattr(options, spec.name) is not None}


def with_timestamp_settings(config: TableConfig, options: HudiOptions) -> TableConfig:
    """The table's configuration with the timestamp settings the writer gives where hoodie.properties holds none
    (version 6 tables may keep them in the writer's config only); one contradicting the table is refused."""
    given = timestamp_settings(options)
    if not given:
        return config
    for key, value in given.items():
        held = config.raw.get(key)
        if held is not None and held != value:
            raise TableExistsError(f"{key}={value!r} contradicts the table, whose hoodie.properties holds {held!r}; "
                                   "drop the option or set it to the table's value")
    return dataclasses.replace(config, raw={**config.raw, **given})
