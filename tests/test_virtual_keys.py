"""Virtual keys (hoodie.populate.meta.fields=false) on copy-on-write tables, through the Python API: base files as
Apache Hudi writes them (meta columns null but the file name), every write operation and index finding keys
from the data columns, the table services, incremental and change-feed reads at whole-file granularity, and the
refusals (merge-on-read, no record key)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import META, hudi_rs, rows

from hudi_ds import ConfigError, HudiTable, TableExistsError
from hudi_ds.config.properties import loads
from hudi_ds.storage.layout import PROPS_PATH

VIRTUAL = {"hoodie.populate.meta.fields": "false"}
COLS = ["id", "dt", "ts", "v"]


def create(path: Path, index: str = "BUCKET", **options: str) -> HudiTable:
    return HudiTable.create(str(path), table_name="vk", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type="COPY_ON_WRITE", options={**VIRTUAL, "hoodie.index.type": index, **options})


def batch(ids: list[int], ts: int, dt: str = "d1") -> pa.Table:
    return pa.table({"id": ids, "dt": [dt] * len(ids), "ts": [ts] * len(ids), "v": [f"{i}@{ts}" for i in ids]})


def base_files(t: HudiTable) -> list[Path]:
    return sorted(p for p in Path(t.path).rglob("*.parquet") if ".hoodie" not in p.parts)


def expected(model: dict[tuple[str, int], dict]) -> list[tuple]:
    return sorted((tuple(r[c] for c in COLS) for r in model.values()), key=repr)


@pytest.mark.parametrize("index", ["BUCKET", "SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM"])
def test_every_write_operation_keeps_virtual_keys_and_reads_agree(tmp_path, index):
    """Each operation in turn, the model of the rows updated by hand: our reader and hudi-rs agree, and every base
    file holds the meta columns as Apache Hudi's writers leave them without meta fields."""
    t = create(tmp_path / "t", index)
    model: dict[tuple[str, int], dict] = {}

    def apply(data: pa.Table, op: str) -> None:
        t.write(data, op)
        if op.startswith("insert_overwrite"):
            parts = {r["dt"] for r in data.to_pylist()}
            for key in [k for k in model if op == "insert_overwrite_table" or k[0] in parts]:
                del model[key]
        for r in data.to_pylist():
            if op == "delete":
                model.pop((r["dt"], r["id"]), None)
            elif (r["dt"], r["id"]) not in model or model[(r["dt"], r["id"])]["ts"] <= r["ts"]:
                model[(r["dt"], r["id"])] = r

    apply(pa.concat_tables([batch(list(range(10)), 1), batch([20, 21], 1, "d2")]), "bulk_insert")
    apply(batch([3, 4, 30], 2), "insert")
    apply(pa.concat_tables([batch([1, 2], 3), batch([5], 0), batch([20, 22], 3, "d2")]), "upsert")
    apply(batch([6, 7], 0), "delete")
    apply(batch([40, 41], 4, "d2"), "insert_overwrite")
    for op in ("upsert", "delete"):  # the overwritten partition takes keys again
        apply(batch([40, 42], 5, "d2"), op)
    apply(batch([8, 9], 6), "upsert")
    assert rows(t.to_arrow(), COLS) == expected(model) == rows(hudi_rs(t.path), COLS)
    apply(batch([50, 51], 7, "d3"), "insert_overwrite_table")
    assert rows(t.to_arrow(), COLS) == expected(model) == rows(hudi_rs(t.path), COLS)

    assert loads(Path(t.path, PROPS_PATH).read_text())["hoodie.populate.meta.fields"] == "false"
    for f in base_files(t):
        pf = pq.ParquetFile(f)
        data = pf.read()
        assert data.column_names[:5] == META
        assert all(data[c].null_count == data.num_rows for c in META[:4])
        assert set(data["_hoodie_file_name"].to_pylist()) == ({f.name} if data.num_rows else set())
        assert not any(k.startswith((b"hoodie_min", b"hoodie_max", b"org.apache.hudi.bloom"))
                       for k in pf.metadata.metadata)


def test_reads_compute_the_meta_columns_and_serve_commits_by_whole_files(tmp_path):
    """The record key comes from the key column, the commit time from the file: an incremental read or the change
    feed of a commit counts every row of the files it wrote, those it carried over unchanged included (an
    update pre- and post-image alike)."""
    t = create(tmp_path / "t", "SIMPLE")
    first = t.write(batch([1, 2, 3], 1), "bulk_insert")
    other = t.write(batch([9], 1, "d2"), "insert")
    second = t.write(batch([2], 2), "upsert")
    snap = t.to_arrow().sort_by("id")
    assert snap["_hoodie_record_key"].to_pylist() == ["1", "2", "3", "9"]
    assert snap["_hoodie_commit_time"].to_pylist() == [second, second, second, other]
    assert snap["_hoodie_partition_path"].to_pylist() == ["d1", "d1", "d1", "d2"]
    assert rows(t.incremental(other), COLS) == [(i, "d1", 2 if i == 2 else 1, f"{i}@{2 if i == 2 else 1}")
                                                for i in (1, 2, 3)]
    feed = t.changes(other)
    assert set(feed["_commit_time"].to_pylist()) == {second}
    by_type = {k: sorted(r["id"] for r in feed.to_pylist() if r["_change_type"] == k)
               for k in ("update_preimage", "update_postimage", "insert", "delete")}
    assert by_type == {"update_preimage": [1, 2, 3], "update_postimage": [1, 2, 3], "insert": [], "delete": []}
    assert [r["v"] for r in feed.to_pylist() if r["id"] == 2] == ["2@1", "2@2"]
    assert rows(t.incremental(first, other), COLS) == [(9, "d2", 1, "9@1")]


def test_services_and_rollback_on_a_virtual_key_table(tmp_path):
    """Cleaning, archiving and the rollback of the latest commit keep the rows every reader sees."""
    t = create(tmp_path / "t", **{"hoodie.clean.commits.retained": "2", "hoodie.keep.min.commits": "3",
                                  "hoodie.keep.max.commits": "4"})
    for ts in range(1, 8):
        t.write(batch(list(range(0, 12, ts)), ts), "upsert")
    before = rows(t.to_arrow(), COLS)
    t.clean()
    t.archive()
    assert rows(t.to_arrow(), COLS) == before == rows(hudi_rs(t.path), COLS)
    assert Path(t.path, ".hoodie", "archived").exists()
    last = t.write(batch([0, 100], 9), "upsert")
    t.rollback(last)
    assert rows(HudiTable(t.path).to_arrow(), COLS) == before == rows(hudi_rs(t.path), COLS)


def test_merge_on_read_and_key_less_tables_are_refused_before_anything_is_written(tmp_path):
    with pytest.raises(ConfigError, match=r"hoodie.populate.meta.fields=false \(virtual keys\) on a MERGE_ON_READ "
                                          r"table.*append-only"):
        HudiTable.create(str(tmp_path / "mor"), table_name="mor", record_key="id", table_type="MERGE_ON_READ",
                         options=VIRTUAL)
    with pytest.raises(ConfigError, match="without a record key"):
        HudiTable.create(str(tmp_path / "keyless"), table_name="kl", table_type="COPY_ON_WRITE", options=VIRTUAL)
    assert not (tmp_path / "mor").exists() and not (tmp_path / "keyless").exists()


def test_the_setting_is_fixed_when_the_table_is_created(tmp_path):
    t = create(tmp_path / "t")
    t.write(batch([1], 1))
    with pytest.raises(TableExistsError, match="hoodie.populate.meta.fields"):
        HudiTable(t.path, options={"hoodie.populate.meta.fields": "true"}).write(batch([2], 1))
    assert rows(t.to_arrow(), COLS) == [(1, "d1", 1, "1@1")]


def test_change_data_written_at_commit_time_is_exact(tmp_path):
    """With hoodie.table.cdc.enabled too, the writer knows which rows it changed: the feed holds only those."""
    t = create(tmp_path / "t", **{"hoodie.table.cdc.enabled": "true"})
    first = t.write(batch([1, 2, 3], 1), "bulk_insert")
    second = t.write(batch([2], 2), "upsert")
    feed = t.changes(first, second)
    assert sorted((r["_change_type"], r["id"], r["v"]) for r in feed.to_pylist()) == [
        ("update_postimage", 2, "2@2"), ("update_preimage", 2, "2@1")]
    assert any(p.name.endswith(".cdc") or "-cdc" in p.name for p in Path(t.path).rglob("*") if ".hoodie" not in p.parts)
