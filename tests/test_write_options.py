"""Every write option of the registry acts through the Python API as it does through Spark (the probes in
write_option_probes.py; tests/spark/test_spark_write_options.py runs the same probes through Spark), and table
settings that contradict the table are refused by `HudiTable.write` as Spark refuses them."""

from __future__ import annotations

import pyarrow as pa
import pytest
from write_option_probes import PROBES, python_api, rows, state, table, values

from hudi_ds import TableExistsError
from hudi_ds.config.option_parsing import OPTION_SPECS, key_of
from hudi_ds.config.table_shape import TABLE_SETTINGS

WRITE_OPTIONS = [s for s in OPTION_SPECS if s.scope == "write"]


@pytest.mark.parametrize("spec", WRITE_OPTIONS, ids=lambda s: s.key)
def test_every_write_option_acts_through_the_python_api(tmp_path, spec):
    assert spec.name in PROBES, (f"{spec.key}: no probe shows what this write option does; add one to "
                                 "tests/write_option_probes.py")
    PROBES[spec.name](python_api, str(tmp_path / "t"))


def test_every_probe_is_of_a_write_option():
    assert set(PROBES) <= {s.name for s in WRITE_OPTIONS}


# a value other than the probe table's for each table setting (the table records change data, so it has a mode)
OTHER_VALUE = {"record_key": "v", "partition_fields": "v", "ordering_field": "v", "table_type": "COPY_ON_WRITE",
               "num_buckets": "8", "hive_style": "true", "url_encode": "true", "table_name": "other",
               "cdc_enabled": "false", "cdc_mode": "OP_KEY_ONLY", "populate_meta_fields": "false"}


@pytest.mark.parametrize("field", [f for f, _, _ in TABLE_SETTINGS])
def test_a_table_setting_that_contradicts_the_table_is_refused_by_write(tmp_path, field):
    path = str(tmp_path / "t")
    t = table(path, {key_of("cdc_enabled"): "true"})
    before = state(t)
    with pytest.raises(TableExistsError, match="contradicts the existing table"):
        python_api(path, rows(["a"], 2), {key_of(field): OTHER_VALUE[field]})
    assert state(t) == before


@pytest.mark.parametrize("field,value", [
    ("merge_mode", "COMMIT_TIME_ORDERING"),
    ("payload_class", "org.apache.hudi.common.model.OverwriteWithLatestAvroPayload"),
    ("merge_strategy_id", "ce9acb64-bde0-424c-9b91-f6ebba25356d"),
])
def test_merge_settings_that_contradict_the_table_are_refused_by_write(tmp_path, field, value):
    """The probe table merges by event time (it has an ordering field); settings meaning commit time are refused,
    the same settings meaning event time write."""
    path = str(tmp_path / "t")
    t = table(path)
    before = state(t)
    with pytest.raises(TableExistsError, match="ask for COMMIT_TIME_ORDERING .* merges with EVENT_TIME_ORDERING"):
        python_api(path, rows(["a"], 2), {key_of(field): value})
    assert state(t) == before
    event_time = {"merge_mode": "EVENT_TIME_ORDERING", "payload_class": "EventTimeAvroPayload",
                  "merge_strategy_id": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"}
    python_api(path, rows(["a"], 0), {key_of(field): event_time[field]})
    assert values(t)["a"] == "a@1"  # event time: the older version loses


def test_a_change_data_mode_given_for_a_table_without_change_data_is_moot(tmp_path):
    """Such a table records no mode (as Apache Hudi): options that created it, mode included, still write to it."""
    path = str(tmp_path / "t")
    options = {key_of("cdc_enabled"): "false", key_of("cdc_mode"): "OP_KEY_ONLY"}
    t = table(path, options)
    python_api(path, rows(["d"], 2), options)
    assert t.to_arrow().num_rows == 4


def test_a_changelog_write_applies_upserts_and_deletes_in_one_commit(tmp_path):
    """The Python API side of tests/spark/test_spark_batch.py::test_changelog_input, with batches of input."""
    path = str(tmp_path / "t")
    t = table(path)
    batches = [rows(["a", "b"], 2, op=["u", "d"]).to_batches()[0], rows(["d", "c"], 3, op=["r", "d"]).to_batches()[0]]
    commits = len(t.timeline())
    python_api(path, pa.Table.from_batches(batches), {key_of("changelog_column"): "op"})
    assert {r["id"]: r["v"] for r in t.to_arrow().to_pylist()} == {"a": "a@2", "d": "d@3"}
    assert len(t.timeline()) == commits + 1
    with pytest.raises(Exception, match="holds unknown change kinds"):
        python_api(path, rows(["a"], 4, op=["x"]), {key_of("changelog_column"): "op"})
    with pytest.raises(Exception, match="cannot be used with operation 'insert'"):
        python_api(path, rows(["a"], 4, op=["u"]), {key_of("changelog_column"): "op", key_of("operation"): "insert"})
