"""Promises docs/options.md and docs/semantics.md make that used to be broken, each checked end to end: 'earliest'
as the start of incremental reads and change feeds, the schema a table whose first write is a delete records,
bucket settings added by hand to a table written without the bucket index, and what a merge-on-read delete
followed by an older upsert leaves (before and after compaction)."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import CorruptTableError, HudiTable


def _table(path: Path, table_type: str = "MERGE_ON_READ", buckets: int = 2) -> HudiTable:
    return HudiTable.create(str(path), table_name="promises", record_key="id", ordering_field="ts",
                            partition_by="dt", table_type=table_type, buckets=buckets)


def _rows(ids: list[str], ts: int, dt: str = "d1") -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "dt": [dt] * len(ids), "v": [f"{i}@{ts}" for i in ids]})


def test_earliest_starts_incremental_reads_and_change_feeds_at_the_first_commit(tmp_path):
    t = _table(tmp_path / "t")
    t.write(_rows(["a", "b"], 1))
    t.write(_rows(["a"], 2))
    t.write(_rows(["b"], 3).select(["id", "dt"]), operation="delete")
    for start in ("earliest", "EARLIEST", "0"):
        assert rows(t.incremental(start), ["id", "v"]) == [("a", "a@2")]
        assert rows(t.scan_incremental(start).collect().to_arrow(), ["id", "v"]) == [("a", "a@2")]
        expected = [("insert", "a"), ("insert", "b"), ("update_preimage", "a"), ("update_postimage", "a"),
                    ("delete", "b")]
        assert [(r["_change_type"], r["id"]) for r in t.changes(start).to_pylist()] == expected
        assert [(r["_change_type"], r["id"]) for r in t.scan_changes(start).collect().to_dicts()] == expected


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_first_write_that_deletes_never_records_a_schema_without_the_ordering_field(tmp_path, table_type):
    """Keys alone record no schema, as Apache Hudi's writer deletes with none: the first rows written then set all
    of it, in their column order. A delete that carries the ordering column records its columns."""
    t = _table(tmp_path / "t", table_type)
    t.write(pa.table({"id": ["a"], "dt": ["d1"]}), operation="delete")
    timeline = t.load_timeline()
    assert "schema" not in timeline.commit_metadata(timeline.commits()[-1]).extra_metadata
    assert t.schema.names == [] and t.to_arrow().num_rows == 0
    with pytest.raises(Exception, match="Failed to resolve the latest schema"):  # as docs/semantics.md says
        hudi_rs(t.path)
    t.write(pa.table({"v": ["x"], "ts": [1], "id": ["a"], "dt": ["d1"]}))
    assert t.schema.names == ["v", "ts", "id", "dt"]
    assert rows(hudi_rs(t.path), ["id", "ts", "v"]) == rows(t.to_arrow(), ["id", "ts", "v"]) == [("a", 1, "x")]

    other = _table(tmp_path / "other", table_type)
    other.write(pa.table({"id": ["a"], "ts": [3], "dt": ["d1"]}), operation="delete")
    assert other.schema.names == ["id", "ts", "dt"] and hudi_rs(other.path).num_rows == 0


def test_bucket_settings_added_by_hand_to_a_table_without_the_bucket_index_are_refused(reference_dir, tmp_path):
    """A table Apache Hudi wrote with its default index has file groups named by uuids: with bucket settings
    added to hoodie.properties, a write would route its keys to new bucket file groups beside the old ones."""
    dst = tmp_path / "t"
    shutil.copytree(reference_dir / "cow_v6_nonpartitioned", dst)
    props = dst / ".hoodie" / "hoodie.properties"
    props.write_text(props.read_text() + "hoodie.index.type=BUCKET\nhoodie.bucket.index.num.buckets=2\n")
    t = HudiTable(str(dst))
    before = t.to_arrow()
    row = before.drop_columns([c for c in before.column_names if c.startswith("_hoodie")]).slice(0, 1)
    newer = row.set_column(row.schema.get_field_index("longField"), "longField",
                           pa.array([row["longField"][0].as_py() + 1], pa.int64()))
    files = {p for p in dst.rglob("*") if ".hoodie" not in p.parts}
    with pytest.raises(CorruptTableError, match="carries no bucket number.*duplicate keys"):
        t.write(newer)
    assert HudiTable(str(dst)).to_arrow().num_rows == before.num_rows
    assert {p for p in dst.rglob("*") if ".hoodie" not in p.parts} == files


def test_a_file_group_beside_another_of_the_same_bucket_is_refused(tmp_path):
    t = _table(tmp_path / "t", "COPY_ON_WRITE", buckets=1)
    t.write(_rows(["a"], 1))
    [base] = list((Path(t.path) / "d1").glob("*.parquet"))
    twin = base.name.replace(base.name[9:13], "ffff" if base.name[9:13] != "ffff" else "eeee", 1)
    shutil.copy(base, base.with_name(twin))  # a second file group of bucket 0
    with pytest.raises(CorruptTableError, match="both claim bucket 0"):
        t.write(_rows(["a"], 2))


def test_a_merge_on_read_delete_then_an_older_upsert_keeps_the_base_version_through_compaction(tmp_path):
    """docs/semantics.md, Deletes: the folded log version (the re-insert, ts 1) loses to the base file's row
    (ts 5); compaction merges by the same rule, so the base version stays for good, as in Apache Hudi. On
    copy-on-write the delete rewrites the base file, and the re-insert is what remains."""
    mor, cow = _table(tmp_path / "mor"), _table(tmp_path / "cow", "COPY_ON_WRITE")
    for t in (mor, cow):
        t.write(_rows(["a"], 5))
        t.write(_rows(["a"], 9).select(["id", "dt"]), operation="delete")
        t.write(_rows(["a"], 1))
    assert rows(mor.to_arrow(), ["id", "v"]) == [("a", "a@5")]
    assert rows(hudi_rs(mor.path), ["id", "v"]) == [("a", "a@5")]
    assert mor.compact()
    assert rows(mor.to_arrow(), ["id", "v"]) == [("a", "a@5")]
    assert rows(hudi_rs(mor.path), ["id", "v"]) == [("a", "a@5")]
    assert rows(cow.to_arrow(), ["id", "v"]) == rows(hudi_rs(cow.path), ["id", "v"]) == [("a", "a@1")]
