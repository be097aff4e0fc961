"""The relations between archiving and cleaning settings that Apache Hudi checks when it builds its write config:
one owner, called where options are parsed and by the archive service."""

from __future__ import annotations

from collections.abc import Callable

from hudi_ds.errors import ConfigError


def check_archive_window(min_commits: int, max_commits: int) -> None:
    """Archiving starts once more than `max_commits` commits are active and leaves `min_commits` of them: the
    window must be non-empty (Apache Hudi refuses max <= min when it builds its write config). The one check of
    it, for options and for the archive service."""
    if min_commits < 1:
        raise ConfigError(f"hoodie.keep.min.commits={min_commits} must be at least 1")
    if max_commits <= min_commits:
        raise ConfigError(
            f"hoodie.keep.max.commits={max_commits} must be greater than hoodie.keep.min.commits={min_commits}: "
            "archiving starts once more than hoodie.keep.max.commits commits are active and leaves "
            f"hoodie.keep.min.commits of them. Raise hoodie.keep.max.commits to {min_commits + 1} or more, or "
            "lower hoodie.keep.min.commits")


def check_archive_keeps_retained_commits(min_commits: int, retain_commits: int) -> None:
    """Archiving must keep more commits active than KEEP_LATEST_COMMITS cleaning retains: otherwise it moves
    commits whose file versions cleaning still keeps off the active timeline, and cleaning, which counts the
    active commits, may never find enough of them to run. Apache Hudi up to 0.13 refuses this when it builds its
    write config; 0.14+ warns and stretches archiving instead. hudi-py refuses it, before anything is written."""
    if min_commits <= retain_commits:
        raise ConfigError(
            f"hoodie.keep.min.commits={min_commits} must be greater than hoodie.clean.commits.retained="
            f"{retain_commits}: archiving would move commits that cleaning still retains off the active timeline. "
            f"Raise hoodie.keep.min.commits to {retain_commits + 1} or more (and hoodie.keep.max.commits above "
            "it), or lower hoodie.clean.commits.retained")


# each cleaning policy and the option field that counts what it retains
_RETAINED_COUNTS = (("KEEP_LATEST_COMMITS", "clean_retain_commits"),
                    ("KEEP_LATEST_FILE_VERSIONS", "clean_retain_file_versions"),
                    ("KEEP_LATEST_BY_HOURS", "clean_retain_hours"))


def inferred_clean_policy(is_set: Callable[[str], bool]) -> str:
    """The cleaning policy without hoodie.clean.policy: the one whose retained count alone is set (Apache Hudi's
    inference), else KEEP_LATEST_COMMITS."""
    counted = [policy for policy, count in _RETAINED_COUNTS if is_set(count)]
    return counted[0] if len(counted) == 1 else "KEEP_LATEST_COMMITS"
