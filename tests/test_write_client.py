"""The Python API takes the registry's options, and its writes run the same table services as the streaming
sink: compaction every N delta commits (inline or in the background), clean, archive."""

from __future__ import annotations

import pyarrow as pa
import pytest
from model import DictModel

from hudi_ds import ConfigError, HudiTable, TableExistsError
from hudi_ds.files.view import Visibility
from hudi_ds.services import post_commit


def _same(model: DictModel, t: HudiTable) -> bool:
    got = sorted((tuple(r.values()) for r in t.to_arrow(columns=["id", "ts", "v"]).to_pylist()), key=repr)
    return got == model.sorted_rows(["id", "ts", "v"])


def _actions(t: HudiTable) -> list[str]:
    return [i.action for i in t.timeline() if i.is_completed]


def _upserts(t: HudiTable, model: DictModel, rounds: int) -> None:
    for r in range(rounds):
        rows = pa.table({"id": [f"k{i}" for i in range(r, r + 5)], "ts": [r] * 5, "v": [float(r)] * 5})
        t.write(rows)
        model.upsert(rows.to_pylist())


def test_python_api_compacts_and_cleans_after_its_commits(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         options={"compaction.delta_commits": "2", "clean.retain_commits": "2"})
    model = DictModel("id", "ts")
    _upserts(t, model, 6)
    actions = _actions(t)
    compactions = [i for i in t.timeline() if i.action == "commit" and i.is_completed]
    assert len(compactions) >= 2, actions
    assert "clean" in actions, actions
    assert _same(model, t)
    # cleaning removed the file slices compaction replaced: every group keeps at most its last 2-3 versions
    from hudi_ds.cli.validate import validate

    assert validate(t.path)["ok"]


def test_services_follow_the_options_of_the_table_object(tmp_path):
    path = str(tmp_path / "t")
    HudiTable.create(path, table_name="t", record_key="id", ordering_field="ts")
    quiet = HudiTable(path, options={"compaction.schedule.enabled": "false", "hoodie.clean.automatic": False,
                                     "hoodie.archive.automatic": "false"})
    _upserts(quiet, DictModel("id", "ts"), 7)
    assert set(_actions(quiet)) == {"deltacommit"}
    busy = HudiTable(path, options={"compaction.delta_commits": 3, "clean.retain_commits": 1})
    _upserts(busy, DictModel("id", "ts"), 4)  # two compactions: the slice before the first one is cleaned
    assert {"commit", "clean"} <= set(_actions(busy))


def test_async_compaction_runs_in_the_background(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         options={"compaction.delta_commits": "2", "compaction.async.enabled": "true",
                                  "hoodie.clean.automatic": "false"})
    model = DictModel("id", "ts")
    _upserts(t, model, 4)
    runner = post_commit.background_runner(t.storage)
    assert runner is not None
    assert runner.wait(60)
    assert not runner.errors
    assert runner.completed
    assert _same(model, t)


def test_unknown_option_names_the_closest_key(tmp_path):
    with pytest.raises(ConfigError, match="did you mean 'compaction.delta_commits'"):
        HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id",
                         options={"compaction.delta_commit": "2"})
    assert not (tmp_path / "t").exists()
    t = HudiTable.create(str(tmp_path / "u"), table_name="u", record_key="id")
    with pytest.raises(ConfigError, match="did you mean 'clean.retain_commits'"):
        HudiTable(t.path, options={"clean.retain_commit": 3})
    with pytest.raises(ConfigError, match="hoodie.keep.min.commits"):
        HudiTable(t.path, options={"hoodie.keep.min.commits": 40, "hoodie.keep.max.commits": 30})


def test_table_settings_through_options(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id",
                         options={"hoodie.bucket.index.num.buckets": "8", "hoodie.table.type": "COW"})
    assert t.config.num_buckets == 8 and t.config.table_type == "COPY_ON_WRITE"
    with pytest.raises(ConfigError, match="set the same table setting"):
        HudiTable.create(str(tmp_path / "u"), table_name="u", record_key="id", buckets=4,
                         options={"hoodie.bucket.index.num.buckets": "8"})
    assert not (tmp_path / "u").exists()


@pytest.mark.parametrize("change, word", [
    ({"url_encode_partitions": True}, "urlencode"),
    ({"hive_style_partitioning": True}, "hive_style"),
    ({"table_type": "COPY_ON_WRITE"}, "table.type"),
])
def test_create_over_an_existing_table_checks_every_setting(tmp_path, change, word):
    args = {"table_name": "t", "record_key": "id", "partition_by": "dt"}
    t = HudiTable.create(str(tmp_path / "t"), **args)
    with pytest.raises(TableExistsError, match=word):
        HudiTable.create(t.path, **args, **change)


@pytest.mark.parametrize("buckets", [True, 0, -1, 2.0, "four"])
def test_buckets_must_be_a_positive_integer(tmp_path, buckets):
    with pytest.raises(ConfigError, match="buckets"):
        HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", buckets=buckets)
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_values_rendering_one_partition_path_land_in_one_file_group(tmp_path, table_type):
    """A null, an empty string and Hudi's default-partition name all write to __HIVE_DEFAULT_PARTITION__:
    routing must treat them as one partition (two groups of one path would lose rows)."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", partition_by="p", buckets=1,
                         table_type=table_type)
    t.write(pa.table({"id": [1, 2, 3, 4], "p": [None, "", "__HIVE_DEFAULT_PARTITION__", "x"]}))
    got = t.to_arrow(columns=["id", "_hoodie_partition_path"]).sort_by("id").to_pylist()
    assert [r["id"] for r in got] == [1, 2, 3, 4]
    assert {r["_hoodie_partition_path"] for r in got[:3]} == {"__HIVE_DEFAULT_PARTITION__"}
    assert len(t.snapshot().view(Visibility.of(t.load_timeline(), None, t.config.layout_version)).latest_slices()) == 2


@pytest.mark.parametrize("operation", ["bulk_insert", "insert", "upsert"])
def test_sorted_input_with_a_repeated_key_is_still_combined(tmp_path, operation):
    """Input sorted by an integer key skips counting distinct keys only when every key rises strictly."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts", buckets=1)
    t.write(pa.table({"id": [1, 2, 2, 3], "ts": [1, 5, 4, 1], "v": ["a", "b", "c", "d"]}), operation=operation)
    assert t.to_arrow(columns=["id", "v"]).sort_by("id").to_pylist() == [
        {"id": 1, "v": "a"}, {"id": 2, "v": "b"}, {"id": 3, "v": "d"}]
