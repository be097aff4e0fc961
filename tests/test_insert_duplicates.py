"""Insert-if-absent (hoodie.datasource.insert.dup.policy, and Apache Hudi 0.x's
hoodie.datasource.write.insert.drop.duplicates) through the Python API: an insert drops, or fails on, its rows
whose keys the table holds, on every index and table type; other operations are not affected."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ds import DuplicateKeyError, HudiTable

DROP = {"hoodie.datasource.insert.dup.policy": "drop"}
FAIL = {"hoodie.datasource.insert.dup.policy": "fail"}
INDEXES = ["BUCKET", "SIMPLE", "GLOBAL_SIMPLE", "BLOOM"]


def create(path: Path, table_type: str, index: str, **options: str) -> HudiTable:
    return HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="p",
                            table_type=table_type,
                            options={"hoodie.index.type": index, **options,
                                     **({"hoodie.bucket.index.num.buckets": "2"} if index == "BUCKET" else {})})


def rows(t: HudiTable) -> dict[int, tuple]:
    return {r["id"]: (r["p"], r["ts"], r["v"]) for r in t.to_arrow(columns=["id", "p", "ts", "v"]).to_pylist()}


def batch(ids: list[int], ts: int, v: str, p: str = "a") -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "p": [p] * len(ids), "v": [v] * len(ids)})


@pytest.mark.parametrize("index", INDEXES)
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_drop_keeps_the_stored_records_and_inserts_the_new_keys(tmp_path, table_type, index):
    t = create(tmp_path / "t", table_type, index)
    t.write(batch([1, 2, 3], 1, "first"))
    t.write(batch([3], 1, "gone"), operation="delete")
    dedup = HudiTable(t.path, options=DROP)
    # an upsert becomes an insert, as in Apache Hudi; key 3 was deleted, so it is not held
    dedup.write(batch([1, 2, 3, 4], 9, "second"))
    assert rows(dedup) == {1: ("a", 1, "first"), 2: ("a", 1, "first"), 3: ("a", 9, "second"),
                           4: ("a", 9, "second")}
    # a key held in another partition: a global index finds it, the others do not look there
    dedup.write(batch([1, 5], 9, "third", p="b"))
    in_b = sorted((r["id"], r["v"]) for r in dedup.to_arrow(columns=["id", "p", "v"]).to_pylist() if r["p"] == "b")
    assert in_b == ([(5, "third")] if index == "GLOBAL_SIMPLE" else [(1, "third"), (5, "third")])


@pytest.mark.parametrize("index", ["BUCKET", "GLOBAL_SIMPLE"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_fail_names_the_held_keys_and_writes_nothing(tmp_path, table_type, index):
    t = create(tmp_path / "t", table_type, index)
    t.write(batch([1, 2], 1, "first"))
    before = rows(t)
    commits = t.timeline()
    with pytest.raises(DuplicateKeyError, match=r"already holds \(2\)"):
        HudiTable(t.path, options=FAIL).write(batch([2, 3], 5, "second"))
    t = HudiTable(t.path)
    assert rows(t) == before
    assert [i for i in t.timeline() if i.action != "rollback"] == commits  # the failed insert rolled back
    HudiTable(t.path, options=FAIL).write(batch([3], 5, "second"))  # new keys go in
    assert rows(HudiTable(t.path))[3] == ("a", 5, "second")


def test_the_0x_switch_drops_and_other_operations_are_not_affected(tmp_path):
    t = create(tmp_path / "t", "MERGE_ON_READ", "SIMPLE")
    t.write(batch([1], 1, "first"))
    dedup = HudiTable(t.path, options={"hoodie.datasource.write.insert.drop.duplicates": "true"})
    dedup.write(batch([1, 2], 5, "second"))
    assert rows(dedup) == {1: ("a", 1, "first"), 2: ("a", 5, "second")}
    dedup.write(batch([1], 7, "bulk"), operation="bulk_insert")  # Hudi applies the policy to inserts only
    assert rows(HudiTable(t.path))[1] == ("a", 7, "bulk")
    with pytest.raises(DuplicateKeyError):  # fail wins over the drop switch
        HudiTable(t.path, options={**FAIL, "hoodie.datasource.write.insert.drop.duplicates": "true"}).write(
            batch([2], 9, "x"))
