"""The error promise: bad input to the public API raises a specific HudiDsError subclass naming the problem,
never a bare ValueError / KeyError / OSError / ArrowInvalid, and the table reads as before."""

from __future__ import annotations

import shutil
from collections.abc import Callable
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

from hudi_ds import (
    ConfigError,
    CorruptTableError,
    HudiDsError,
    HudiTable,
    InstantStateError,
    InvalidDataError,
    InvalidInstantError,
    SchemaError,
    TableNotFoundError,
)
from hudi_ds.config.option_parsing import parse_options


@pytest.fixture
def table(tmp_path) -> HudiTable:
    t = HudiTable.create(str(tmp_path / "t"), table_name="promise", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=2, options={"compaction.schedule.enabled": "false"})
    t.write(pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "dt": ["d1", "d2", "d1"], "v": [1.0, 2.0, 3.0]}))
    t.write(pa.table({"id": ["a"], "ts": [2], "dt": ["d1"], "v": [10.0]}))
    return t


def row(**over: Any) -> pa.Table:
    base: dict[str, Any] = {"id": ["z"], "ts": [3], "dt": ["d1"], "v": [0.5]}
    base.update(over)
    return pa.table(base)


CASES: list[tuple[str, Callable[[HudiTable], Any], type[HudiDsError], str]] = [
    ("as_of-word", lambda t: t.to_arrow(as_of="yesterday"), InvalidInstantError, "yesterday"),
    ("as_of-empty", lambda t: t.to_arrow(as_of=""), InvalidInstantError, "instant time"),
    ("as_of-bad-date", lambda t: t.to_arrow(as_of="2024-13-45"), InvalidInstantError, "2024-13-45"),
    ("as_of-int", lambda t: t.to_arrow(as_of=12), InvalidInstantError, "12"),
    ("as_of-digits", lambda t: t.to_arrow(as_of="12345"), InvalidInstantError, "14"),
    ("incremental-start", lambda t: t.incremental("soon"), InvalidInstantError, "soon"),
    ("changes-end", lambda t: t.changes("0", "later"), InvalidInstantError, "later"),
    ("rollback-word", lambda t: t.rollback("the last one"), InvalidInstantError, "the last one"),
    ("rollback-not-latest", lambda t: t.rollback(t.timeline()[0].requested_time), InstantStateError, "latest"),
    ("duplicate-columns", lambda t: t.write(pa.Table.from_arrays(
        [pa.array(["q"]), pa.array([3]), pa.array(["d1"]), pa.array([1.0]), pa.array([2.0])],
        names=["id", "ts", "dt", "v", "v"])), SchemaError, "'v'"),
    ("long-partition-value", lambda t: t.write(row(dt=["x" * 300])), InvalidDataError, "dt"),
    ("null-ordering-value", lambda t: t.write(pa.table({"id": ["y", "z"], "ts": pa.array([3, None], pa.int64()),
                                                        "dt": ["d1", "d2"], "v": [0.5, 0.6]})), InvalidDataError, "'ts'"),
    ("not-a-table-type", lambda t: t.write([1, 2, 3]), InvalidDataError, "int"),
    ("string-data", lambda t: t.write("rows"), InvalidDataError, "str"),
    ("option-type", lambda t: HudiTable(t.path, options={"compaction.delta_commits": "many"}), ConfigError,
     "compaction.delta_commits"),
    ("option-unknown", lambda t: HudiTable(t.path, options={"clean.retain": 3}), ConfigError, "clean.retain"),
    ("storage-key", lambda t: HudiTable(t.path, storage_options={"AWS_NOPE": "1"}), ConfigError, "AWS_NOPE"),
    ("bad-op", lambda t: t.write(row(), operation="merge"), ConfigError, "merge"),
    ("columns", lambda t: t.to_arrow(columns=["nope"]), ConfigError, "nope"),
]


@pytest.mark.parametrize("call, error, words", [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_bad_input_raises_a_specific_error_and_changes_nothing(table, call, error, words):
    before = table.to_arrow().sort_by("id")
    with pytest.raises(HudiDsError) as info:
        call(table)
    assert isinstance(info.value, error), repr(info.value)
    assert type(info.value) is not HudiDsError
    assert words in str(info.value), str(info.value)
    assert HudiTable(table.path).to_arrow().sort_by("id").equals(before)


def test_meta_columns_in_the_input_are_ignored_as_apache_hudi_does(table):
    """A DataFrame read from a Hudi table carries meta columns; writing it elsewhere must not store them."""
    instant = table.write(row(_hoodie_commit_time=["19700101000000000"], _hoodie_record_key=["forged"]))
    z = [r for r in table.to_arrow().to_pylist() if r["id"] == "z"]
    assert len(z) == 1 and z[0]["_hoodie_commit_time"] == instant and z[0]["_hoodie_record_key"] == "z"


def test_a_path_that_is_a_file(tmp_path):
    path = tmp_path / "file.txt"
    path.write_text("not a table")
    with pytest.raises(TableNotFoundError, match="file.txt"):
        HudiTable(str(path))
    with pytest.raises(ConfigError, match="file.txt"):
        HudiTable.create(str(path), table_name="t", record_key="id")
    assert path.read_text() == "not a table"


def test_a_path_that_does_not_exist(tmp_path):
    with pytest.raises(TableNotFoundError, match="create one"):
        HudiTable(str(tmp_path / "nowhere"))


def test_parse_options_bad_values():
    with pytest.raises(ConfigError, match="hoodie.bucket.index.num.buckets"):
        parse_options({"hoodie.bucket.index.num.buckets": "zero"})


def _damage(table: HudiTable, how: str) -> Path:
    root = Path(table.path)
    if how == "properties":
        (root / ".hoodie" / "hoodie.properties").write_bytes(b"\x00\xff garbage")
        return root / ".hoodie" / "hoodie.properties"
    if how == "commit":
        commit = sorted((root / ".hoodie").glob("*.deltacommit"))[-1]
        commit.write_bytes(b"{ not json")
        return commit
    raise AssertionError(how)


@pytest.mark.parametrize("how", ["properties", "commit"])
def test_damaged_table_files_are_corrupt_table_errors_naming_the_file(table, how):
    damaged = _damage(table, how)
    with pytest.raises((CorruptTableError, ConfigError)) as info:
        HudiTable(table.path).to_arrow()
    assert damaged.name in str(info.value)


def test_truncated_copy_on_write_base_file(tmp_path):
    t = HudiTable.create(str(tmp_path / "cow"), table_name="cow", record_key="id", ordering_field="ts",
                         table_type="COPY_ON_WRITE", buckets=1)
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "v": [1.0, 2.0]}))
    base = next(Path(t.path).glob("*.parquet"))
    base.write_bytes(base.read_bytes()[:40])
    with pytest.raises(CorruptTableError, match=base.name):
        t.to_arrow()
    with pytest.raises(CorruptTableError, match=base.name):
        t.write(pa.table({"id": ["a"], "ts": [2], "v": [5.0]}))


@pytest.mark.parametrize("layout", ["v6", "v8"])
def test_copied_reference_table_with_a_missing_properties_file(reference_dir, tmp_path, layout):
    src = next(p for p in sorted(reference_dir.iterdir()) if (p / ".hoodie" / "hoodie.properties").exists()
               and f"_{layout}_" in p.name)
    dst = tmp_path / "copy"
    shutil.copytree(src, dst)
    (dst / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(CorruptTableError, match="hoodie.properties.backup"):
        HudiTable(str(dst))
