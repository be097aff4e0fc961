"""The options of the table services that run after each commit: compaction, cleaning and archiving."""

from __future__ import annotations

from typing import Any

from pydantic import field_validator

from hudi_ds.config.option_field import CleanPolicyName, OptionGroup, at_least_one, opt, upper_name


class ServiceOptions(OptionGroup):
    compaction_enabled: bool = opt(
        "compaction.schedule.enabled", True,
        "MERGE_ON_READ: schedule a compaction after a commit once enough delta commits accumulated.",
        scope="service")
    compaction_delta_commits: int = opt(
        "compaction.delta_commits", 5, "Schedule a compaction every N delta commits.",
        "hoodie.compact.inline.max.delta.commits", scope="service")
    compaction_async: bool = opt(
        "compaction.async.enabled", False,
        "Execute compactions on a background thread of the writing process (writes go on; their logs land in "
        "the new file slices) instead of inline after the commit. Long-lived writers only (HudiTable, the "
        "streaming sink); Spark batch writes compact inline.", "hoodie.compact.async",
        "hoodie.datasource.compaction.async.enable", scope="service")
    clean_enabled: bool = opt(
        "hoodie.clean.automatic", True, "Clean after each commit.", "clean.async.enabled", scope="service")
    clean_policy: CleanPolicyName | None = opt(
        "hoodie.clean.policy", None,
        "Which file versions cleaning keeps: KEEP_LATEST_COMMITS (those queries on the last "
        "hoodie.clean.commits.retained commits read), KEEP_LATEST_FILE_VERSIONS (the newest "
        "hoodie.clean.fileversions.retained file slices of each file group; no time travel window) or "
        "KEEP_LATEST_BY_HOURS (those queries on the commits of the last hoodie.clean.hours.retained hours read). "
        "Unset: the policy whose retained count alone is set, as Apache Hudi infers it, else KEEP_LATEST_COMMITS.",
        "hoodie.cleaner.policy", "clean.policy", scope="service")
    clean_retain_commits: int = opt(
        "hoodie.clean.commits.retained", 10,
        "KEEP_LATEST_COMMITS: keep the file versions queries on the last N commits read (time travel and "
        "incremental reads within them).", "hoodie.cleaner.commits.retained", "clean.retain_commits",
        scope="service")
    clean_retain_file_versions: int = opt(
        "hoodie.clean.fileversions.retained", 3,
        "KEEP_LATEST_FILE_VERSIONS: keep the newest N file slices of each file group.",
        "hoodie.cleaner.fileversions.retained", "clean.retain_file_versions", scope="service")
    clean_retain_hours: int = opt(
        "hoodie.clean.hours.retained", 24,
        "KEEP_LATEST_BY_HOURS: keep the file versions queries on the commits of the last N hours read (hours "
        "before the clean, in the table's timeline time zone).", "hoodie.cleaner.hours.retained",
        "clean.retain_hours", scope="service")
    clean_incremental: bool = opt(
        "hoodie.clean.incremental.enabled", True,
        "KEEP_LATEST_COMMITS and KEEP_LATEST_BY_HOURS: skip the listing of a clean when the commits since the last "
        "clean's window wrote log files and new file groups only (nothing new can go), as Apache Hudi's incremental "
        "cleaning does; false: every clean lists the table.", "hoodie.cleaner.incremental.mode", scope="service")
    archive_enabled: bool = opt(
        "hoodie.archive.automatic", True, "Archive old instants after each commit.", scope="service")
    archive_min_commits: int = opt(
        "hoodie.keep.min.commits", 20, "Archiving keeps at least this many commits on the active timeline.",
        "archive.min_commits", scope="service")
    archive_max_commits: int = opt(
        "hoodie.keep.max.commits", 30, "Archiving starts when the active timeline holds more commits than this.",
        "archive.max_commits", scope="service")

    @field_validator("clean_policy", mode="before")
    @classmethod
    def _upper_clean_policy(cls, v: Any) -> Any:
        return upper_name(v)

    @field_validator("compaction_delta_commits", "clean_retain_commits", "clean_retain_file_versions",
                     "clean_retain_hours", "archive_min_commits", "archive_max_commits")
    @classmethod
    def _positive_service_counts(cls, v: int) -> int:
        return at_least_one(v)
