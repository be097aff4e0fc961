"""Bad input raises a HudiDsError subclass naming the problem and the fix, and the table reads as before."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ds import (
    ConfigError,
    HudiDsError,
    HudiTable,
    InvalidDataError,
    SchemaError,
    TableExistsError,
    TableNotFoundError,
)


@pytest.fixture()
def table(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="bad", record_key="id", ordering_field="ts",
                         partition_by="dt")
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "dt": ["d1", "d2"], "v": [1.0, 2.0]}))
    return t


def _unchanged(t: HudiTable, before: pa.Table) -> None:
    after = t.to_arrow()
    assert after.sort_by("id").equals(before.sort_by("id"))
    assert not [i for i in t.timeline() if not i.is_completed and i.action != "rollback"]


@pytest.mark.parametrize(
    "data, error, words",
    [
        (pa.table({"id": ["c", None], "ts": [1, 1], "dt": ["d1", "d1"], "v": [1.0, 2.0]}), InvalidDataError, ["id", "null"]),
        (pa.table({"ts": [1], "dt": ["d1"], "v": [1.0]}), SchemaError, ["'id'", "missing"]),
        (pa.table({"id": ["c"], "dt": ["d1"], "v": [1.0]}), SchemaError, ["'ts'", "missing"]),
        (pa.table({"id": ["c"], "ts": [1], "v": [1.0]}), SchemaError, ["'dt'", "missing"]),
        (pa.table({"id": ["c"], "ts": [1], "dt": ["d1"], "v": ["text"]}), SchemaError, ["'v'", "string", "double"]),
        (pa.table({"id": ["c"], "ts": [1], "dt": ["a/b"], "v": [1.0]}), InvalidDataError, ["dt", "a/b"]),
        (pa.table({"id": ["c"], "ts": [1], "dt": [".."], "v": [1.0]}), InvalidDataError, ["dt", ".."]),
        (pa.table({"id": ["c"], "ts": [1], "dt": ["."], "v": [1.0]}), InvalidDataError, ["dt"]),
    ],
    ids=["null-key", "no-key-col", "no-ordering-col", "no-partition-col", "type-conflict", "slash", "dotdot", "dot"],
)
def test_bad_data_is_refused_and_nothing_changes(table, data, error, words):
    before = table.to_arrow()
    files_before = sorted(p.name for p in __import__("pathlib").Path(table.path).rglob("*") if ".hoodie" not in p.parts)
    with pytest.raises(error) as info:
        table.write(data)
    message = str(info.value)
    for w in words:
        assert w in message, message
    _unchanged(table, before)
    files_after = sorted(p.name for p in __import__("pathlib").Path(table.path).rglob("*") if ".hoodie" not in p.parts)
    assert files_after == files_before


def test_unknown_operation(table):
    before = table.to_arrow()
    with pytest.raises(ConfigError, match="upsert"):
        table.write(pa.table({"id": ["c"], "ts": [1], "dt": ["d1"], "v": [1.0]}), operation="merge")
    _unchanged(table, before)


def test_not_a_table(tmp_path):
    with pytest.raises(TableNotFoundError, match="HudiTable.create"):
        HudiTable(str(tmp_path))


def test_create_over_existing_with_other_keys(table):
    with pytest.raises(TableExistsError, match="record_key"):
        HudiTable.create(table.path, table_name="bad", record_key="other", ordering_field="ts", partition_by="dt")
    with pytest.raises(TableExistsError, match="buckets"):
        HudiTable.create(table.path, table_name="bad", record_key="id", ordering_field="ts", partition_by="dt",
                         buckets=8)
    same = HudiTable.create(table.path, table_name="bad", record_key="id", ordering_field="ts", partition_by="dt")
    assert same.to_arrow().num_rows == 2


def test_url_encoded_partitions_stay_inside_the_table(tmp_path):
    t = HudiTable.create(str(tmp_path / "enc"), table_name="enc", record_key="id", partition_by="dt",
                         url_encode_partitions=True)
    t.write(pa.table({"id": ["a", "b"], "dt": ["x/y", "50%"]}))
    got = sorted(t.to_arrow(columns=["id", "dt"]).to_pylist(), key=lambda r: r["id"])
    assert got == [{"id": "a", "dt": "x/y"}, {"id": "b", "dt": "50%"}]
    for p in (tmp_path / "enc").rglob("*.parquet"):
        assert p.resolve().is_relative_to((tmp_path / "enc").resolve())
    assert t.to_arrow(filters=[("dt", "=", "x/y")]).num_rows == 1
    with pytest.raises(InvalidDataError):
        t.write(pa.table({"id": ["c"], "dt": [".."]}))


def test_all_errors_are_hudi_ds_errors():
    for cls in (ConfigError, SchemaError, InvalidDataError, TableExistsError, TableNotFoundError):
        assert issubclass(cls, HudiDsError)


def test_bad_filters_and_columns(table):
    with pytest.raises(ConfigError, match="nope"):
        table.to_arrow(columns=["nope"])
    with pytest.raises(ConfigError, match="like"):
        table.to_arrow(filters=[("id", "like", "a")])
    with pytest.raises(ConfigError, match="missing_col"):
        table.to_arrow(filters=[("missing_col", "=", 1)])
