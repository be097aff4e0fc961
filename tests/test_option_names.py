"""Option names as Apache Hudi 0.14-1.2 spells them, the relations between settings Hudi refuses, and the answer
to Hudi keys of features hudi-py does not implement; through HudiTable.create / HudiTable(...) and the CLI."""

from __future__ import annotations

import typing
import warnings
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_ds import ConfigError, HudiTable, IgnoredOptionWarning
from hudi_ds.cli import main
from hudi_ds.config.hudi_features import FEATURES, NOT_IMPLEMENTED_YET, TUNING_KEYS, HudiFeature
from hudi_ds.config.option_parsing import OPTION_SPECS, OptionSpec, parse_options
from hudi_ds.config.options import HudiOptions


def create(path: Path, table_type: str = "MERGE_ON_READ", **options: Any) -> HudiTable:
    return HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type=table_type, options=options)


def rows(n: int, ts: int = 1) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in range(n)], "ts": [ts] * n, "dt": ["a", "b"] * (n // 2)})


def state(path: Path) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in path.rglob("*") if p.is_file())


# ---- every key Apache Hudi reads for a setting hudi-py implements ------------------------------------------------

# values that differ from the default and pass every check (sample() derives the others from the type)
SAMPLES = {"path": "/t", "table_name": "t1", "record_key": "a,b", "partition_fields": "p,q", "num_buckets": "8",
           "keygen_class": "org.apache.hudi.keygen.ComplexKeyGenerator", "metadata_enable": "false",
           "payload_class": "org.apache.hudi.common.model.DefaultHoodieRecordPayload",
           "merge_strategy_id": "ce9acb64-bde0-424c-9b91-f6ebba25356d",
           "drop_partition_columns": "false", "as_of": "20240101000000000", "begin_instant": "earliest",
           "end_instant": "20240102000000000", "heartbeat_timeout_s": "12.5", "clean_retain_commits": "11",
           "archive_min_commits": "21", "archive_max_commits": "31", "record_size_threshold": "0.5",
           "record_index_growth_factor": "1.5"}


# settings that only go together with another one: what each test sets beside it
COMPANIONS = {"delete_field": {"hoodie.payload.delete.marker": "D"}, "delete_marker": {"hoodie.payload.delete.field": "Op"}}


def sample(spec: OptionSpec) -> str:
    if spec.name in SAMPLES:
        return SAMPLES[spec.name]
    kind = HudiOptions.model_fields[spec.name].annotation
    args = [a for a in typing.get_args(kind) if a is not type(None)]
    if typing.get_origin(kind) is typing.Literal or (args and typing.get_origin(args[0]) is typing.Literal):
        choices = typing.get_args(kind if typing.get_origin(kind) is typing.Literal else args[0])
        return next((str(c) for c in choices if c != spec.default), str(choices[0]).lower())
    base = args[0] if args else kind
    if base is bool:
        return str(not spec.default).lower()
    if base is int:
        return str((spec.default or 0) + 7)
    return "x_value"


SPELLINGS = [(spec, key) for spec in OPTION_SPECS for key in (spec.key, *spec.aliases)]


@pytest.mark.parametrize("spec,key", SPELLINGS, ids=[k for _, k in SPELLINGS])
def test_every_spelling_sets_the_same_setting(spec, key):
    value = sample(spec)
    companion = COMPANIONS.get(spec.name, {})
    canonical = parse_options({spec.key: value, **companion})
    given = parse_options({key.upper(): value, **companion})  # keys are case-insensitive
    assert given.is_set(spec.name) and getattr(given, spec.name) == getattr(canonical, spec.name)


# Read off Apache Hudi's source (ConfigProperty.withAlternatives, FlinkOptions.withFallbackKeys, the 1.0 renames of
# hoodie.cleaner.* to hoodie.clean.*): each key Hudi 0.14-1.2 reads for a setting hudi-py implements.
HUDI_KEYS = [
    ("hoodie.clean.commits.retained", "5", "clean_retain_commits", 5),  # 1.x
    ("hoodie.cleaner.commits.retained", "5", "clean_retain_commits", 5),  # 0.14
    ("clean.retain_commits", "5", "clean_retain_commits", 5),  # Flink
    ("hoodie.clean.policy", "keep_latest_by_hours", "clean_policy", "KEEP_LATEST_BY_HOURS"),
    ("hoodie.cleaner.policy", "KEEP_LATEST_FILE_VERSIONS", "clean_policy", "KEEP_LATEST_FILE_VERSIONS"),
    ("clean.policy", "KEEP_LATEST_COMMITS", "clean_policy", "KEEP_LATEST_COMMITS"),
    ("hoodie.clean.fileversions.retained", "2", "clean_retain_file_versions", 2),
    ("hoodie.cleaner.fileversions.retained", "2", "clean_retain_file_versions", 2),
    ("clean.retain_file_versions", "2", "clean_retain_file_versions", 2),
    ("hoodie.clean.hours.retained", "6", "clean_retain_hours", 6),
    ("hoodie.cleaner.hours.retained", "6", "clean_retain_hours", 6),
    ("clean.retain_hours", "6", "clean_retain_hours", 6),
    ("hoodie.keep.min.commits", "12", "archive_min_commits", 12),
    ("archive.min_commits", "12", "archive_min_commits", 12),
    ("hoodie.keep.max.commits", "40", "archive_max_commits", 40),
    ("archive.max_commits", "40", "archive_max_commits", 40),
    ("hoodie.datasource.view.type", "read_optimized", "query_type", "read_optimized"),
    ("hoodie.datasource.write.storage.type", "COPY_ON_WRITE", "table_type", "COPY_ON_WRITE"),
    ("hoodie.datasource.compaction.async.enable", "true", "compaction_async", True),
    ("hoodie.compact.inline.max.delta.commits", "3", "compaction_delta_commits", 3),
    ("hoodie.payload.ordering.field", "ts", "ordering_field", "ts"),
    ("hoodie.table.ordering.fields", "ts", "ordering_field", "ts"),
]


@pytest.mark.parametrize("key,value,name,expected", HUDI_KEYS, ids=[k for k, *_ in HUDI_KEYS])
def test_hudi_keys_of_implemented_settings(key, value, name, expected):
    assert getattr(parse_options({key: value}), name) == expected


def test_current_clean_keys_act_through_the_python_api(tmp_path):
    """The issue's keys: hoodie.clean.commits.retained and hoodie.clean.policy were 'unknown'."""
    t = create(tmp_path / "t", "COPY_ON_WRITE",
               **{"hoodie.clean.commits.retained": 2, "hoodie.clean.policy": "KEEP_LATEST_COMMITS"})
    for ts in range(1, 6):
        t.write(rows(4, ts))
    cleans = [i for i in t.timeline() if i.action == "clean" and i.is_completed]
    assert cleans and t.options.clean_retain_commits == 2 and t.options.cleaning_policy() == "KEEP_LATEST_COMMITS"


@pytest.mark.parametrize("options,policy", [
    ({}, "KEEP_LATEST_COMMITS"),
    ({"hoodie.clean.commits.retained": 3}, "KEEP_LATEST_COMMITS"),
    ({"hoodie.clean.fileversions.retained": 3}, "KEEP_LATEST_FILE_VERSIONS"),
    ({"hoodie.cleaner.hours.retained": 3}, "KEEP_LATEST_BY_HOURS"),
    ({"hoodie.clean.hours.retained": 3, "hoodie.clean.fileversions.retained": 3}, "KEEP_LATEST_COMMITS"),
    ({"hoodie.clean.hours.retained": 3, "hoodie.clean.policy": "KEEP_LATEST_FILE_VERSIONS"}, "KEEP_LATEST_FILE_VERSIONS"),
])
def test_cleaning_policy_is_inferred_as_hudi_infers_it(options, policy):
    assert parse_options(options).cleaning_policy() == policy


# ---- settings Apache Hudi refuses ------------------------------------------------------------------------------

REFUSED = [
    ({"hoodie.keep.min.commits": 30, "hoodie.keep.max.commits": 30},
     ["hoodie.keep.max.commits=30", "hoodie.keep.min.commits=30", "Raise hoodie.keep.max.commits to 31"]),
    ({"hoodie.clean.commits.retained": 30, "hoodie.keep.min.commits": 5, "hoodie.keep.max.commits": 40},
     ["hoodie.keep.min.commits=5", "hoodie.clean.commits.retained=30", "Raise hoodie.keep.min.commits to 31"]),
    ({"hoodie.cleaner.commits.retained": 20}, ["hoodie.keep.min.commits=20", "hoodie.clean.commits.retained=20"]),
    ({"archive.min_commits": 2, "archive.max_commits": 3}, ["hoodie.keep.min.commits=2",
                                                            "hoodie.clean.commits.retained=10"]),
]


@pytest.mark.parametrize("options,words", REFUSED)
def test_settings_hudi_refuses_fail_before_anything_is_written(tmp_path, options, words):
    with pytest.raises(ConfigError) as err:
        create(tmp_path / "new", **options)
    assert all(w in str(err.value) for w in words), str(err.value)
    assert not (tmp_path / "new").exists()
    existing = create(tmp_path / "t")
    existing.write(rows(4))
    before = state(tmp_path / "t")
    with pytest.raises(ConfigError) as err:
        HudiTable(existing.path, options=options).write(rows(4, 2))
    assert all(w in str(err.value) for w in words)
    assert state(tmp_path / "t") == before


def test_the_archive_service_applies_the_same_rule(tmp_path):
    t = create(tmp_path / "t")
    with pytest.raises(ConfigError) as by_options:
        parse_options({"hoodie.keep.min.commits": 5, "hoodie.keep.max.commits": 5})
    with pytest.raises(ConfigError) as by_service:
        t.archive(min_commits=5, max_commits=5)
    assert str(by_service.value) == str(by_options.value)


def test_retained_commits_are_checked_under_keep_latest_commits_only():
    """Apache Hudi checks hoodie.keep.min.commits against the retained commits only under KEEP_LATEST_COMMITS."""
    opts = parse_options({"hoodie.clean.policy": "KEEP_LATEST_FILE_VERSIONS", "hoodie.clean.commits.retained": 30,
                          "hoodie.keep.min.commits": 5, "hoodie.keep.max.commits": 8})
    assert opts.archive_min_commits == 5


def test_cli_names_both_keys(tmp_path, capsys):
    create(tmp_path / "t").write(rows(4))
    rc = main(["info", str(tmp_path / "t"), "-o", "hoodie.keep.min.commits=5", "-o", "hoodie.keep.max.commits=5"])
    err = capsys.readouterr().err
    assert rc == 1 and "hoodie.keep.max.commits=5" in err and "hoodie.keep.min.commits=5" in err


# ---- options that are not a mapping ----------------------------------------------------------------------------

def test_options_given_as_a_list_of_pairs(tmp_path):
    with pytest.raises(ConfigError, match="options must be a mapping .* got a list"):
        pairs: Any = [("a", "b")]
        HudiTable.create(str(tmp_path / "new"), table_name="t", record_key="id", options=pairs)
    assert not (tmp_path / "new").exists()
    t = create(tmp_path / "t")
    with pytest.raises(ConfigError, match="Pass dict"):
        HudiTable(t.path, options=pairs)


# ---- Apache Hudi keys of features hudi-py does not implement ----------------------------------------------------

def _one_key(feature: HudiFeature) -> str:
    named = sorted({*feature.keys, *feature.switches, *feature.harmless})
    return named[0] if named else feature.prefixes[0] + "some.setting"


FAMILIES = FEATURES + NOT_IMPLEMENTED_YET


@pytest.mark.parametrize("feature", FAMILIES, ids=[f.name for f in FAMILIES])
def test_every_feature_family_is_answered_by_name(feature):
    key = _one_key(feature)
    if feature.effect == "error":
        with pytest.raises(ConfigError, match="could change the data") as err:
            parse_options({key: "x"})
        assert feature.name in str(err.value) and key in str(err.value)
    else:
        with pytest.warns(IgnoredOptionWarning) as seen:
            parse_options({key: "x"})
        assert any(feature.name in str(w.message) and key in str(w.message) for w in seen)


def test_a_typical_hudi_job_writes_with_warnings_naming_the_features(tmp_path):
    job = {"hoodie.datasource.hive_sync.enable": "true", "hoodie.datasource.hive_sync.database": "lake",
           "hoodie.datasource.hive_sync.partition_fields": "dt", "hoodie.clustering.inline": "true",
           "hoodie.clustering.inline.max.commits": "4", "hoodie.metrics.on": "true",
           "hoodie.parquet.small.file.limit": "104857600", "hoodie.parquet.block.size": "134217728",
           "hoodie.upsert.shuffle.parallelism": "200",
           "hoodie.cleaner.policy.failed.writes": "LAZY", "hoodie.cleaner.commits.retained": "3"}
    with pytest.warns(IgnoredOptionWarning) as seen:
        t = create(tmp_path / "t", **job)
    said = " ".join(str(w.message) for w in seen)
    for name in ("catalog sync", "clustering", "metrics reporting", "file and log block sizing"):
        assert name in said
    assert "parallelism" not in said and "failed-writes" not in said  # tuning, and what hudi-py does (LAZY)
    t.write(rows(4))
    assert t.to_arrow().num_rows == 4 and t.options.clean_retain_commits == 3


def test_keys_that_switch_a_feature_off_are_accepted_silently():
    with warnings.catch_warnings():
        warnings.simplefilter("error")
        parse_options({"hoodie.datasource.hive_sync.enable": "false", "hoodie.datasource.hive_sync.database": "db",
                       "hoodie.clustering.inline": "false", "hoodie.clustering.async.enabled": "false",
                       "hoodie.clustering.plan.strategy.sort.columns": "a",
                       "hoodie.write.concurrency.mode": "single_writer", "hoodie.populate.meta.fields": "true",
                       "hoodie.base.file.format": "PARQUET", "hoodie.combine.before.upsert": "true",
                       **{k: "4" for k in TUNING_KEYS}})


@pytest.mark.parametrize("options,feature", [
    ({"hoodie.write.concurrency.mode": "optimistic_concurrency_control",
      "hoodie.write.lock.provider": "org.apache.hudi.client.transaction.lock.ZookeeperBasedLockProvider"},
     "multi-writer concurrency control"),
    ({"hoodie.write.record.merge.custom.implementation.classes": "com.example.Merger"}, "custom mergers"),
    ({"hoodie.populate.meta.fields": "false"}, r"virtual keys\) on a MERGE_ON_READ table"),
    ({"hoodie.precommit.validators": "org.apache.hudi.client.validator.SqlQueryEqualityPreCommitValidator"},
     "pre-commit validators"),
])
def test_features_whose_absence_changes_data_fail_before_anything_is_written(tmp_path, options, feature):
    with pytest.raises(ConfigError, match=feature):
        create(tmp_path / "new", **options)
    assert not (tmp_path / "new").exists()


@pytest.mark.parametrize("key,closest", [
    ("hoodie.clean.commits.retaind", "hoodie.clean.commits.retained"),
    ("hoodie.cleaner.comits.retained", "hoodie.cleaner.commits.retained"),
    ("hoodie.metadata.enabled", "hoodie.metadata.enable"),  # under the metadata family's prefix, but a typo
    ("clean.retain_commit", "clean.retain_commits"),
])
def test_typos_still_get_the_closest_name(key, closest):
    with pytest.raises(ConfigError, match=f"unknown option '{key}'; did you mean '{closest}'"):
        parse_options({key: "1"})


def test_cli_warns_and_runs(tmp_path, capsys):
    create(tmp_path / "t").write(rows(4))
    with pytest.warns(IgnoredOptionWarning, match="catalog sync"):
        rc = main(["info", str(tmp_path / "t"), "-o", "hoodie.datasource.hive_sync.enable=true"])
    assert rc == 0


def test_every_option_groups_checks_apply_to_the_joined_options():
    """pydantic keys validators by name: a group's check named like another group's would silently replace it."""
    groups = HudiOptions.__bases__
    own = [name for g in groups for name in vars(g)["__pydantic_decorators__"].field_validators if name in vars(g)]
    assert len(groups) == 6 and all(own)
    assert len(own) == len(set(own)), "two option groups name a field check alike"
    assert set(own) <= set(HudiOptions.__pydantic_decorators__.field_validators)
    with pytest.raises(ConfigError, match="must be at least 1"):
        parse_options({"hoodie.metadata.compact.max.delta.commits": "0"})
    assert parse_options({"write.operation": "INSERT", "hoodie.datasource.query.type": "SNAPSHOT"}).operation == "insert"
