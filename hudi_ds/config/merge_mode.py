"""How a table merges the versions of a record: Apache Hudi's record merge mode, and the properties that carry it
at each table version.

Version 8 and 9 tables name the mode (`hoodie.record.merge.mode`); version 6 tables carry it in their payload
class, and any table may carry it in a merge strategy id. Which wins, and what is refused, follows Apache Hudi 1.1's
`HoodieTableConfig.inferCorrectMergingBehavior`: the payload class first on versions 6 and 9, the strategy id first
on version 8, the ordering field deciding when none is set. EVENT_TIME_ORDERING: per key the highest ordering value
wins (ties to the later write). COMMIT_TIME_ORDERING: the later write wins, whatever the ordering field says
(commit order: completion time on versions 8/9). CUSTOM (a Java merger or any other payload) is refused: merging
by another rule would return other rows than Apache Hudi does, except for one payload whose rule hudi_ds has:
FirstValueAvroPayload, event-time ordering whose ties keep the first version (the stored record, the earlier row of
a batch). Apache Hudi 1.1 keeps it as a payload at every version (RFC-97 deprecates it without a merge mode), so a
table with it says CUSTOM with the payload-based strategy id on versions 8 and 9.
"""

from __future__ import annotations

from typing import Literal

from hudi_ds.errors import UnsupportedTableError

MergeMode = Literal["EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING"]
EVENT_TIME: MergeMode = "EVENT_TIME_ORDERING"
COMMIT_TIME: MergeMode = "COMMIT_TIME_ORDERING"
CUSTOM = "CUSTOM"
MERGE_MODES = (EVENT_TIME, COMMIT_TIME, CUSTOM)

_MODEL = "org.apache.hudi.common.model."
DEFAULT_PAYLOAD = _MODEL + "DefaultHoodieRecordPayload"
EVENT_TIME_PAYLOAD = _MODEL + "EventTimeAvroPayload"
OVERWRITE_PAYLOAD = _MODEL + "OverwriteWithLatestAvroPayload"
# version 6's partial updates: null does not overwrite (RFC-97 maps both to IGNORE_DEFAULTS)
PARTIAL_UPDATE_PAYLOAD = _MODEL + "PartialUpdateAvroPayload"
OVERWRITE_NON_DEFAULTS_PAYLOAD = _MODEL + "OverwriteNonDefaultsWithLatestAvroPayload"
PARTIAL_PAYLOADS = frozenset({PARTIAL_UPDATE_PAYLOAD, OVERWRITE_NON_DEFAULTS_PAYLOAD})
# AWS DMS changelogs: commit-time ordering, a row whose Op column is D deletes (RFC-97 maps it so on version 9)
DMS_PAYLOAD = _MODEL + "AWSDmsAvroPayload"
DMS_DELETE_FIELD, DMS_DELETE_MARKER = "Op", "D"
# event-time ordering, ties to the first version (HoodieTableConfig keeps it as a CUSTOM payload at version 9)
FIRST_VALUE_PAYLOAD = _MODEL + "FirstValueAvroPayload"
EVENT_TIME_MERGER_ID = "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"
COMMIT_TIME_MERGER_ID = "ce9acb64-bde0-424c-9b91-f6ebba25356d"
PAYLOAD_BASED_MERGER_ID = "00000000-0000-0000-0000-000000000000"  # HoodieRecordMerger.PAYLOAD_BASED_MERGE_STRATEGY_UUID

# payload class -> the merge mode it means (HoodieTableConfig.inferRecordMergeModeFromPayloadClass)
_PAYLOAD_MODES: dict[str, MergeMode] = {DEFAULT_PAYLOAD: EVENT_TIME, EVENT_TIME_PAYLOAD: EVENT_TIME,
                                        OVERWRITE_PAYLOAD: COMMIT_TIME, PARTIAL_UPDATE_PAYLOAD: EVENT_TIME,
                                        OVERWRITE_NON_DEFAULTS_PAYLOAD: COMMIT_TIME, DMS_PAYLOAD: COMMIT_TIME}
_STRATEGY_MODES: dict[str, MergeMode] = {EVENT_TIME_MERGER_ID: EVENT_TIME, COMMIT_TIME_MERGER_ID: COMMIT_TIME}


def payload_class_name(name: str) -> str:
    """A payload class by its full name (a short name is taken as one of Hudi's own, in its model package)."""
    name = name.strip()
    return name if "." in name else _MODEL + name


def mode_of_payload(payload: str | None) -> str | None:
    """The merge mode of a payload class; Hudi 1.x reads the version 6 partial-update payloads as their merge
    mode plus IGNORE_DEFAULTS (RFC-97), a version 8 table with one as CUSTOM (its strategy id decides there)."""
    if not payload:
        return None
    return _PAYLOAD_MODES.get(payload_class_name(payload), CUSTOM)


def mode_of_strategy(strategy_id: str | None) -> str | None:
    if not strategy_id:
        return None
    return _STRATEGY_MODES.get(strategy_id.strip(), CUSTOM)


def infer_merge_mode(mode: str | None, payload: str | None, strategy_id: str | None, ordering_field: str | None,
                     version: int) -> str:
    """The merge mode these settings give (CUSTOM included); ValueError when they contradict each other."""
    mode = mode.strip().upper() if mode else None
    if mode is not None and mode not in MERGE_MODES:
        raise ValueError(f"unknown record merge mode {mode!r}; use one of {', '.join(MERGE_MODES)}")
    by_payload, by_strategy = mode_of_payload(payload), mode_of_strategy(strategy_id)
    if by_payload is None and by_strategy is None:
        return mode or (EVENT_TIME if ordering_field else COMMIT_TIME)
    if version >= 8 and None not in (by_payload, by_strategy) and by_strategy != CUSTOM and by_payload != by_strategy:
        raise ValueError(f"the payload class {payload} and the merge strategy id {strategy_id} contradict each "
                         "other; set one of them")
    first, second = (by_strategy, by_payload) if version == 8 else (by_payload, by_strategy)
    inferred = first if first is not None else second
    assert inferred is not None
    if mode is not None and mode != inferred:
        raise ValueError(f"the record merge mode {mode} contradicts the payload class ({payload}) or merge strategy "
                         f"id ({strategy_id}), which mean {inferred}")
    return inferred


def is_first_value(mode: str, payload: str | None, strategy_id: str | None) -> bool:
    """Whether these settings mean FirstValueAvroPayload's rule (a CUSTOM mode run by that payload)."""
    return (mode == CUSTOM and bool(payload) and payload_class_name(payload or "") == FIRST_VALUE_PAYLOAD
            and mode_of_strategy(strategy_id) in (None, CUSTOM, EVENT_TIME))


def require_known(mode: str, payload: str | None, strategy_id: str | None) -> MergeMode:
    """The mode, when hudi_ds merges by it (FirstValueAvroPayload's: event-time ordering, its ties aside);
    UnsupportedTableError naming the merger otherwise."""
    if mode == EVENT_TIME or mode == COMMIT_TIME:
        return mode
    if is_first_value(mode, payload, strategy_id):
        return EVENT_TIME
    merger = (f"the payload class {payload}" if mode_of_payload(payload) == CUSTOM
              else f"the merge strategy {strategy_id}" if strategy_id else "a custom merger")
    raise UnsupportedTableError(
        f"the table merges records with {merger} (hoodie.record.merge.mode=CUSTOM), Java code hudi_ds cannot run; "
        "merging by another rule would return other rows than Apache Hudi does. Read and write it with Apache Hudi")


def payload_of(mode: str, ignore_defaults: bool = False) -> str:
    """The payload class of a built-in mode (HoodieRecordPayload.getAvroPayloadForMergeMode); with
    `ignore_defaults`, the version 6 partial-update payload of the mode."""
    if ignore_defaults:
        return PARTIAL_UPDATE_PAYLOAD if mode == EVENT_TIME else OVERWRITE_NON_DEFAULTS_PAYLOAD
    return DEFAULT_PAYLOAD if mode == EVENT_TIME else OVERWRITE_PAYLOAD


def strategy_of(mode: str) -> str:
    """The merge strategy id of a built-in mode."""
    return EVENT_TIME_MERGER_ID if mode == EVENT_TIME else COMMIT_TIME_MERGER_ID
