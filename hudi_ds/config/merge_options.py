"""The options of how the versions of a record merge: merge mode, payload class, merge strategy id and partial
updates (the table records them), and the marker that makes a row a delete."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator, model_validator

from hudi_ds.config.merge_mode import (
    COMMIT_TIME_MERGER_ID,
    CUSTOM,
    EVENT_TIME_MERGER_ID,
    FIRST_VALUE_PAYLOAD,
    mode_of_payload,
    mode_of_strategy,
    payload_class_name,
)
from hudi_ds.config.option_field import OptionGroup, opt, upper_name


class MergeOptions(OptionGroup):
    payload_class: str | None = opt(
        "hoodie.datasource.write.payload.class", None,
        "The merge rule of a new table as a payload class (as on version 6 tables): DefaultHoodieRecordPayload or "
        "EventTimeAvroPayload (event-time ordering), OverwriteWithLatestAvroPayload (commit-time ordering), "
        "PartialUpdateAvroPayload / OverwriteNonDefaultsWithLatestAvroPayload (the same with IGNORE_DEFAULTS partial "
        "updates), FirstValueAvroPayload (event-time ordering where an equal ordering value keeps the stored record "
        "and, within a write, the first row; needs an ordering field). On an existing table it must agree with the "
        "table's merge mode.",
        "payload.class", "write.payload.class", "hoodie.compaction.payload.class", scope="table")
    merge_mode: Literal["EVENT_TIME_ORDERING", "COMMIT_TIME_ORDERING", "CUSTOM"] | None = opt(
        "hoodie.record.merge.mode", None,
        "How the versions of a record merge: EVENT_TIME_ORDERING (the highest ordering value wins, ties to the "
        "later write) or COMMIT_TIME_ORDERING (the later write wins; no ordering field needed); CUSTOM only with "
        "the payload class FirstValueAvroPayload (as Apache Hudi 1.1 records it). Unset: event-time with an "
        "ordering field, else commit-time. Version 6 tables record it as their payload class.",
        "hoodie.write.record.merge.mode", scope="table")
    partial_update_mode: Literal["NONE", "KEEP_VALUES", "FILL_DEFAULTS", "IGNORE_DEFAULTS", "IGNORE_MARKERS"] | None = (
        opt("hoodie.table.partial.update.mode", None,
            "Partial updates (version 9 tables): KEEP_VALUES (a write carrying some columns keeps the others), "
            "IGNORE_DEFAULTS (a null does not overwrite), IGNORE_MARKERS (a value equal to "
            "hoodie.write.partial.update.custom.marker does not overwrite), FILL_DEFAULTS or NONE (missing columns "
            "become null). Version 6 tables take IGNORE_DEFAULTS as PartialUpdateAvroPayload (event time) or "
            "OverwriteNonDefaultsWithLatestAvroPayload (commit time).", scope="table"))
    partial_update_marker: str | None = opt(
        "hoodie.write.partial.update.custom.marker", None,
        "IGNORE_MARKERS: the string that marks a cell the write does not change (Debezium's "
        "__debezium_unavailable_value); string columns only.", scope="table")
    delete_field: str | None = opt(
        "hoodie.payload.delete.field", None,
        "A column whose value hoodie.payload.delete.marker makes a row a delete (Apache Hudi's custom delete marker, "
        "e.g. AWS DMS's Op=D): an upsert deletes the key, an insert drops the row. A column _hoodie_is_deleted=true "
        "always deletes. Version 9 tables record both at creation; on versions 6 and 8 they are settings of each "
        "write, as in Apache Hudi.", "hoodie.record.merge.property.hoodie.payload.delete.field")
    delete_marker: str | None = opt(
        "hoodie.payload.delete.marker", None,
        "The value of hoodie.payload.delete.field that marks a delete (compared as text, as Apache Hudi does).",
        "hoodie.record.merge.property.hoodie.payload.delete.marker")
    merge_strategy_id: str | None = opt(
        "hoodie.record.merge.strategy.id", None,
        "The merge mode as Apache Hudi's merge strategy id (eeb8d96f-...: event time, ce9acb64-...: commit time); "
        "the ids of custom mergers are refused.", "hoodie.write.record.merge.strategy.id",
        "hoodie.datasource.write.record.merger.strategy", "hoodie.compaction.record.merger.strategy",
        "record.merger.strategy", scope="table")

    @field_validator("payload_class")
    @classmethod
    def _payload(cls, v: str | None) -> str | None:
        if v and mode_of_payload(v) == CUSTOM and payload_class_name(v) != FIRST_VALUE_PAYLOAD:
            raise ValueError(
                f"hudi-py does not have the merge rule of {payload_class_name(v)} (Java code it cannot run); use "
                "DefaultHoodieRecordPayload (event-time ordering), OverwriteWithLatestAvroPayload (commit-time "
                "ordering), PartialUpdateAvroPayload or OverwriteNonDefaultsWithLatestAvroPayload, "
                "FirstValueAvroPayload (event-time ordering, ties keep the first version), or "
                "hoodie.record.merge.mode")
        return payload_class_name(v) if v else v

    @field_validator("merge_mode", "partial_update_mode", mode="before")
    @classmethod
    def _upper_merge_names(cls, v: Any) -> Any:
        return upper_name(v)

    @field_validator("merge_strategy_id")
    @classmethod
    def _merge_strategy(cls, v: str | None) -> str | None:
        if v and mode_of_strategy(v) == CUSTOM:
            raise ValueError(f"{v} is not the strategy id of a merge mode hudi-py has (custom mergers are Java code "
                             f"it cannot run); use {EVENT_TIME_MERGER_ID} (event time) or {COMMIT_TIME_MERGER_ID} "
                             "(commit time), or hoodie.record.merge.mode")
        return v.strip() if v else v

    @model_validator(mode="after")
    def _delete_marker_pair(self) -> MergeOptions:
        if (self.delete_field is None) != (self.delete_marker is None):
            raise ValueError("hoodie.payload.delete.field and hoodie.payload.delete.marker go together (the field "
                             "and the value of it that marks a delete): set both or neither")
        return self
