"""The option registry: every setting of hudi-py declared once (key, type, default, aliases, scope, doc) in the
option group of its concept, joined here into one model with the relations between settings that Apache Hudi
checks when it builds its write config. Canonical keys are Apache Hudi's Spark keys; the other keys Hudi 0.14-1.2
reads for a setting are its aliases. Options are parsed onto `HudiOptions` by hudi_ds.config.option_parsing."""

from __future__ import annotations

from typing import Any

from pydantic import ValidationError, model_validator

from hudi_ds.config.merge_mode import CUSTOM, FIRST_VALUE_PAYLOAD, PARTIAL_PAYLOADS, infer_merge_mode
from hudi_ds.config.merge_options import MergeOptions
from hudi_ds.config.metadata_options import MetadataTableOptions
from hudi_ds.config.option_field import CleanPolicyName
from hudi_ds.config.read_options import ReadOptions
from hudi_ds.config.retention_rules import (
    check_archive_keeps_retained_commits,
    check_archive_window,
    inferred_clean_policy,
)
from hudi_ds.config.service_options import ServiceOptions
from hudi_ds.config.table_options import TableOptions
from hudi_ds.config.write_options import WriteOptions
from hudi_ds.errors import ConfigError


# pydantic lists the fields of the last base first: the groups are named here in the reverse of their order in
# the docs (table, metadata table, merge, write, read, services)
class HudiOptions(ServiceOptions, ReadOptions, WriteOptions, MergeOptions, MetadataTableOptions, TableOptions):
    """Every option of hudi-py, for tables, reads, writes and services (scope tells which)."""

    @model_validator(mode="after")
    def _merge_settings_agree(self) -> HudiOptions:
        if self.requested_merge_mode() == CUSTOM and self.payload_class != FIRST_VALUE_PAYLOAD:
            raise ValueError("a CUSTOM merger is Java code hudi-py cannot run; use EVENT_TIME_ORDERING or "
                             "COMMIT_TIME_ORDERING (CUSTOM goes only with the payload class FirstValueAvroPayload)")
        return self

    @model_validator(mode="after")
    def _retention(self) -> HudiOptions:
        """The relations between retention settings Apache Hudi checks when it builds its write config."""
        check_archive_window(self.archive_min_commits, self.archive_max_commits)
        if self.cleaning_policy() == "KEEP_LATEST_COMMITS":
            check_archive_keeps_retained_commits(self.archive_min_commits, self.clean_retain_commits)
        return self

    def is_set(self, name: str) -> bool:
        return name in self.model_fields_set

    def requested_merge_mode(self) -> str | None:
        """The merge mode the merge settings ask for (mode, payload class, strategy id), None when none is set;
        ValueError when they contradict each other."""
        if self.merge_mode is None and self.payload_class is None and self.merge_strategy_id is None:
            return None
        return infer_merge_mode(self.merge_mode, self.payload_class, self.merge_strategy_id, self.ordering_field,
                                self.table_version)

    def duplicate_policy(self) -> str:
        """What an insert does with rows whose keys the table holds: none, drop or fail (Apache Hudi's
        HoodieSparkSqlWriter: fail wins, the 0.x drop switch means drop)."""
        if self.insert_dup_policy == "none" and self.insert_drop_duplicates:
            return "drop"
        return self.insert_dup_policy

    def requested_partial_update_mode(self) -> str | None:
        """The partial update mode the options ask for (the mode, or a version 6 partial-update payload)."""
        if self.partial_update_mode is not None:
            return self.partial_update_mode
        if self.payload_class in PARTIAL_PAYLOADS:
            return "IGNORE_DEFAULTS"
        return None

    def cleaning_policy(self) -> CleanPolicyName:
        """hoodie.clean.policy, or the policy whose retained count alone is set (Apache Hudi's inference)."""
        return self.clean_policy or inferred_clean_policy(self.is_set)  # type: ignore[return-value]

    def with_values(self, **values: Any) -> HudiOptions:
        """A copy with some settings changed (validated again); they count as set."""
        data = {k: getattr(self, k) for k in self.model_fields_set}
        data.update(values)
        return validated_options(data, {})


def validated_options(values: dict[str, Any], given_as: dict[str, str]) -> HudiOptions:
    try:
        return HudiOptions(**values)
    except ValidationError as exc:
        err = exc.errors()[0]
        name = str(err["loc"][0]) if err.get("loc") else ""
        if not name:  # a check across settings: its message names them
            raise ConfigError(str(err.get("msg", exc)).removeprefix("Value error, ")) from None
        field = HudiOptions.model_fields.get(name)
        extra = field.json_schema_extra if field is not None and isinstance(field.json_schema_extra, dict) else {}
        key = given_as.get(name, str(extra.get("key", name)))
        msg = str(err.get("msg", exc)).removeprefix("Value error, ")
        raise ConfigError(f"option {key}={values.get(name)!r} is not valid: {msg}") from None
