"""hoodie.properties across table versions 6, 8 and 9: what Apache Hudi's upgrade and downgrade handlers add,
change and remove, applied to the table's own properties (every key they do not name stays as it was).

Read from Hudi 1.1's SevenToEightUpgradeHandler (6 -> 8 goes through 7, a bridge version with no changes),
EightToNineUpgradeHandler, NineToEightDowngradeHandler and EightToSixDowngradeHandler; checked against the
reference tables Hudi 1.0 and 1.1 wrote. Where Hudi leaves a key the version does not use (the timeline folders
after a downgrade, the old spelling of the merge strategy id), the table gets the properties a table created at
that version has instead. Only the payloads whose meaning hudi_ds knows are converted; any other is refused here,
before anything is written.
"""

from __future__ import annotations

from hudi_ds.config.merge_mode import (
    COMMIT_TIME_MERGER_ID,
    DEFAULT_PAYLOAD,
    EVENT_TIME_MERGER_ID,
    EVENT_TIME_PAYLOAD,
    OVERWRITE_PAYLOAD,
)
from hudi_ds.config.table_config import recorded_key_generator_type
from hudi_ds.errors import UnsupportedTableError

# payloads whose merge rule is event-time or commit-time ordering (RFC-97): the ones hudi_ds converts
KNOWN_PAYLOADS = frozenset({DEFAULT_PAYLOAD, OVERWRITE_PAYLOAD, EVENT_TIME_PAYLOAD})

VERSION = "hoodie.table.version"
LAYOUT = "hoodie.timeline.layout.version"
TIMELINE_PATH = "hoodie.timeline.path"
HISTORY_PATH = "hoodie.timeline.history.path"
INITIAL_VERSION = "hoodie.table.initial.version"
MERGE_MODE = "hoodie.record.merge.mode"
STRATEGY_ID = "hoodie.record.merge.strategy.id"
OLD_STRATEGY_ID = "hoodie.compaction.record.merger.strategy"  # the 0.x spelling of STRATEGY_ID
PAYLOAD = "hoodie.compaction.payload.class"
LEGACY_PAYLOAD = "hoodie.legacy.payload.class"
PRECOMBINE = "hoodie.table.precombine.field"
ORDERING = "hoodie.table.ordering.fields"
KEYGEN_CLASS = "hoodie.table.keygenerator.class"
KEYGEN_TYPE = "hoodie.table.keygenerator.type"
PARTIAL_UPDATE_MODE = "hoodie.table.partial.update.mode"
MERGE_PROPERTY_PREFIX = "hoodie.record.merge.property."
TABLE_FORMAT = "hoodie.table.format"

_KEYGEN_CLASS_OF_TYPE = {
    "SIMPLE": "SimpleKeyGenerator", "COMPLEX": "ComplexKeyGenerator", "NON_PARTITION": "NonpartitionedKeyGenerator",
    "TIMESTAMP": "TimestampBasedKeyGenerator", "CUSTOM": "CustomKeyGenerator",
    "SIMPLE_AVRO": "SimpleAvroKeyGenerator", "COMPLEX_AVRO": "ComplexAvroKeyGenerator",
    "NON_PARTITION_AVRO": "NonpartitionedAvroKeyGenerator", "TIMESTAMP_AVRO": "TimestampBasedAvroKeyGenerator",
    "CUSTOM_AVRO": "CustomAvroKeyGenerator",
}


def check_convertible(props: dict[str, str]) -> None:
    """UnsupportedTableError when the table's merge settings have no conversion hudi_ds can do exactly."""
    payload = props.get(PAYLOAD) or props.get(LEGACY_PAYLOAD)
    if payload and payload not in KNOWN_PAYLOADS:
        raise UnsupportedTableError(
            f"the table merges with the payload class {payload}, whose version 8/9 form (merge mode, partial update "
            "mode, merge properties) hudi_ds does not convert; change its version with Apache Hudi")
    mode = (props.get(MERGE_MODE) or "").upper()
    if mode == "CUSTOM":
        raise UnsupportedTableError(
            "the table merges with a custom merger (hoodie.record.merge.mode=CUSTOM), which hudi_ds cannot carry to "
            "another version; change its version with Apache Hudi")


def upgraded_properties(props: dict[str, str], to_version: int) -> dict[str, str]:
    """The properties of the table (at version 6 or 8) once upgraded to `to_version` (8 or 9)."""
    check_convertible(props)
    out = dict(props)
    if int(out[VERSION]) == 6:
        out = _six_to_eight(out)
    if to_version == 9:
        out = _eight_to_nine(out)
    return out


def downgraded_properties(props: dict[str, str], to_version: int) -> dict[str, str]:
    """The properties of the table (at version 8 or 9) once downgraded to `to_version` (8 or 6); refuses what
    only the newer version can express."""
    check_convertible(props)
    out = dict(props)
    if int(out[VERSION]) == 9:
        out = _nine_to_eight(out)
    if to_version == 6:
        out = _eight_to_six(out)
    return out


def _six_to_eight(p: dict[str, str]) -> dict[str, str]:
    p[INITIAL_VERSION] = p[VERSION]  # stays 6 over later upgrades
    p[VERSION], p[LAYOUT] = "8", "2"
    p.setdefault(TIMELINE_PATH, "timeline")
    p.setdefault(HISTORY_PATH, "history")
    mode, payload, strategy = _v8_merge_settings(p.get(PAYLOAD), bool(p.get(PRECOMBINE)),
                                                  p.get("hoodie.table.type", "COPY_ON_WRITE").upper())
    p[MERGE_MODE], p[PAYLOAD], p[STRATEGY_ID] = mode, payload, strategy
    p.pop(OLD_STRATEGY_ID, None)
    if p.get(KEYGEN_CLASS):  # Hudi keeps the class and adds its type
        p[KEYGEN_TYPE] = recorded_key_generator_type(p[KEYGEN_CLASS])
    return p


def _v8_merge_settings(payload: str | None, has_ordering: bool, table_type: str) -> tuple[str, str, str]:
    """(merge mode, payload class, merge strategy id) SevenToEightUpgradeHandler gives a version 6 table: event-time
    ordering for DefaultHoodieRecordPayload, and for any merge-on-read table with an ordering field (its payload
    becoming DefaultHoodieRecordPayload); commit-time ordering with OverwriteWithLatestAvroPayload otherwise."""
    if payload == DEFAULT_PAYLOAD or (table_type == "MERGE_ON_READ" and has_ordering):
        return "EVENT_TIME_ORDERING", DEFAULT_PAYLOAD, EVENT_TIME_MERGER_ID
    return "COMMIT_TIME_ORDERING", OVERWRITE_PAYLOAD, COMMIT_TIME_MERGER_ID


def _eight_to_nine(p: dict[str, str]) -> dict[str, str]:
    p[VERSION] = "9"
    payload = p.pop(PAYLOAD, None)
    p.pop(STRATEGY_ID, None)  # implied by the merge mode from version 9 on
    p.pop(OLD_STRATEGY_ID, None)
    if payload == EVENT_TIME_PAYLOAD:
        p[MERGE_MODE], p[STRATEGY_ID] = "EVENT_TIME_ORDERING", EVENT_TIME_MERGER_ID
    if payload:
        p[LEGACY_PAYLOAD] = payload  # payloads are deprecated in 1.1 (RFC-97): kept for a downgrade
    ordering = p.pop(PRECOMBINE, None) or p.get(ORDERING)
    if ordering:
        p[ORDERING] = ordering
    p.setdefault(TABLE_FORMAT, "native")
    return p


def _nine_to_eight(p: dict[str, str]) -> dict[str, str]:
    mode = (p.get(PARTIAL_UPDATE_MODE) or "NONE").upper()
    if mode != "NONE":
        raise UnsupportedTableError(
            f"the table uses partial updates (hoodie.table.partial.update.mode={mode}), which only version 9 has: "
            "readers of version 8 would take partial records for whole ones. It cannot be downgraded")
    extra = sorted(k for k in p if k.startswith(MERGE_PROPERTY_PREFIX))
    if extra:
        raise UnsupportedTableError(
            f"the table has merge properties ({', '.join(extra)}), which only version 9 reads: a downgrade would "
            "change how its records merge. It cannot be downgraded")
    table_format = p.get(TABLE_FORMAT, "native")
    if table_format != "native":
        raise UnsupportedTableError(
            f"the table's files are in the {table_format!r} format (hoodie.table.format), which only version 9 "
            "knows. It cannot be downgraded")
    p[VERSION] = "8"
    for key in (PARTIAL_UPDATE_MODE, TABLE_FORMAT):
        p.pop(key, None)
    legacy = p.pop(LEGACY_PAYLOAD, None)
    if legacy:
        p[PAYLOAD] = legacy
    ordering = p.pop(ORDERING, None)
    if ordering:
        p[PRECOMBINE] = ordering
    # Hudi 1.0 writes the payload and the strategy id of a table's merge mode; 1.1 implies them
    merge_mode = (p.get(MERGE_MODE) or "").upper()
    if merge_mode in ("EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"):
        event_time = merge_mode == "EVENT_TIME_ORDERING"
        p.setdefault(PAYLOAD, DEFAULT_PAYLOAD if event_time else OVERWRITE_PAYLOAD)
        p.setdefault(STRATEGY_ID, EVENT_TIME_MERGER_ID if event_time else COMMIT_TIME_MERGER_ID)
    return p


def _eight_to_six(p: dict[str, str]) -> dict[str, str]:
    merge_mode = (p.pop(MERGE_MODE, None) or "").upper()
    if not merge_mode:
        merge_mode = "EVENT_TIME_ORDERING" if p.get(PRECOMBINE) else "COMMIT_TIME_ORDERING"
    event_time = merge_mode == "EVENT_TIME_ORDERING"
    p[PAYLOAD] = p.get(PAYLOAD) or (DEFAULT_PAYLOAD if event_time else OVERWRITE_PAYLOAD)
    p.pop(STRATEGY_ID, None)
    p[OLD_STRATEGY_ID] = EVENT_TIME_MERGER_ID if event_time else COMMIT_TIME_MERGER_ID
    keygen_type = p.pop(KEYGEN_TYPE, None)
    if keygen_type and not p.get(KEYGEN_CLASS):
        name = _KEYGEN_CLASS_OF_TYPE.get(keygen_type.upper())
        if name is None:
            raise UnsupportedTableError(
                f"the table's key generator type {keygen_type!r} (hoodie.table.keygenerator.type) has no version 6 "
                "class name hudi_ds knows; change its version with Apache Hudi")
        p[KEYGEN_CLASS] = "org.apache.hudi.keygen." + name
    for key in (INITIAL_VERSION, TIMELINE_PATH, HISTORY_PATH):
        p.pop(key, None)
    p[VERSION], p[LAYOUT] = "6", "1"
    return p
