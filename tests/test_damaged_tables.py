"""Damaged tables raise a CorruptTableError naming the file, never a bare pyarrow/JSON exception."""

from __future__ import annotations

import shutil
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ds import CorruptTableError, HudiTable
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.task import TaskWriter


def _table(tmp_path: Path, name: str = "t") -> HudiTable:
    t = HudiTable.create(str(tmp_path / name), table_name="dmg", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=1)
    t.write(pa.table({"id": ["a", "b", "c"], "ts": [1, 1, 1], "dt": ["x", "x", "y"]}))
    t.write(pa.table({"id": ["a", "c"], "ts": [2, 2], "dt": ["x", "y"]}))
    return t


def _one(root: Path, pattern: str) -> Path:
    found = sorted(p for p in root.rglob(pattern) if ".hoodie" not in p.parts)
    assert found, pattern
    return found[0]


def test_truncated_log_of_committed_instant(tmp_path):
    t = _table(tmp_path)
    log = _one(Path(t.path), ".*.log.*")
    data = log.read_bytes()
    log.write_bytes(data[: len(data) // 2])
    with pytest.raises(CorruptTableError) as info:
        t.to_arrow()
    assert log.name in str(info.value)


@pytest.mark.parametrize("pattern", [".*.log.*", "*.parquet"])
def test_committed_file_emptied_is_named_not_silently_skipped(tmp_path, pattern):
    """A 0-byte log used to read as if its commit never happened, and validate passed."""
    from hudi_ds.cli.validate import validate

    t = _table(tmp_path)
    victim = _one(Path(t.path), pattern)
    victim.write_bytes(b"")
    with pytest.raises(CorruptTableError, match=f"{victim.name} has 0 bytes but commit .* wrote"):
        HudiTable(t.path).to_arrow()
    report = validate(t.path)
    assert not report["ok"] and any(victim.name in e for e in report["errors"])


def test_truncated_reference_avro_log(reference_dir, tmp_path):
    src = reference_dir / "quickstart_mor_avro_v6_trips_8i1u"
    dst = tmp_path / "ref"
    shutil.copytree(src, dst)
    log = _one(dst, ".*.log.*")
    log.write_bytes(log.read_bytes()[:-40])
    with pytest.raises(CorruptTableError, match=log.name):
        HudiTable(str(dst)).to_arrow()


def test_missing_base_file(tmp_path):
    t = _table(tmp_path)
    base = _one(Path(t.path), "*.parquet")
    base.unlink()
    with pytest.raises(CorruptTableError) as info:
        t.to_arrow()
    assert base.name in str(info.value)


def test_garbled_properties(tmp_path):
    t = _table(tmp_path)
    (Path(t.path) / ".hoodie" / "hoodie.properties").write_bytes(b"\x00\xff garbage \x01")
    with pytest.raises(CorruptTableError, match="hoodie.properties"):
        HudiTable(t.path)


@pytest.mark.parametrize("content", [b"{not json", b"Obj\x01garbage"])
def test_unparseable_instant_file(tmp_path, content):
    t = _table(tmp_path)
    instant = t.timeline()[-1]
    path = Path(t.path) / ".hoodie" / f"{instant.requested_time}.deltacommit"
    path.write_bytes(content)
    with pytest.raises(CorruptTableError) as info:
        t.to_arrow()
    assert path.name in str(info.value)


def test_truncated_tail_of_uncommitted_instant_is_skipped(tmp_path):
    t = _table(tmp_path)
    before = t.to_arrow().sort_by("id")
    coordinator = Coordinator(t.storage, t.config)
    plan = coordinator.begin("upsert", t.schema)
    task = TaskWriter(plan)
    task.write(pa.table({"id": ["a", "b"], "ts": [9, 9], "dt": ["x", "x"]}))
    result = task.finish()  # never committed
    log = Path(t.path) / next(f.path for f in result.files if f.is_log)
    log.write_bytes(log.read_bytes()[:-25])
    assert t.to_arrow().sort_by("id").equals(before)


def test_reading_never_modifies_a_table(reference_dir, tmp_path):
    for name in ("quickstart_mor_avro_v8_trips_8i3u1d", "mor_parquet_v6_simplekeygen_nonhivestyle_overwritetable"):
        root = reference_dir / name
        before = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
        t = HudiTable(str(root))
        t.to_arrow()
        t.to_arrow(read_optimized=True)
        t.incremental("0")
        after = {p: p.stat().st_mtime_ns for p in root.rglob("*")}
        assert before == after


def test_writing_tables_without_keys_to_look_up_or_with_a_metadata_table_is_refused(reference_dir, tmp_path):
    """Merge-on-read with virtual keys; a metadata table holding an index hudi-py does not keep (bloom_filters,
    added to a copy's partition list)."""
    from hudi_ds import UnsupportedTableError

    for name, word in (("mor_parquet_v6_simplekeygen_hivestyle_no_metafields", "populate.meta.fields=false"),
                       ("mor_avro_v9_txns_simple_meta", "bloom_filters")):
        dst = tmp_path / name
        shutil.copytree(reference_dir / name, dst)
        if word == "bloom_filters":
            props = dst / ".hoodie" / "hoodie.properties"
            props.write_text(props.read_text().replace("hoodie.table.metadata.partitions=",
                                                       "hoodie.table.metadata.partitions=bloom_filters,"))
        t = HudiTable(str(dst))
        before = t.to_arrow()
        with pytest.raises(UnsupportedTableError, match=word):
            t.write(before.drop_columns([c for c in before.column_names if c.startswith("_hoodie")]))
        assert HudiTable(str(dst)).to_arrow().num_rows == before.num_rows


def _edit_properties(t: HudiTable, key: str, value: str) -> None:
    props = Path(t.path) / ".hoodie" / "hoodie.properties"
    lines = [f"{key}={value}" if line.startswith(f"{key}=") else line for line in props.read_text().splitlines()]
    props.write_text("\n".join(lines) + "\n")


@pytest.mark.parametrize("buckets", ["4", "1"])
def test_hand_edited_bucket_count_is_refused_before_it_duplicates_keys(tmp_path, buckets):
    t = HudiTable.create(str(tmp_path / "t"), table_name="dmg", record_key="id", ordering_field="ts", buckets=2)
    t.write(pa.table({"id": [f"k{i}" for i in range(20)], "ts": [1] * 20}))
    before = t.to_arrow().sort_by("id")
    _edit_properties(t, "hoodie.bucket.index.num.buckets", buckets)
    with pytest.raises(CorruptTableError, match="duplicate keys"):
        HudiTable(t.path).write(pa.table({"id": [f"k{i}" for i in range(20)], "ts": [2] * 20}))
    _edit_properties(t, "hoodie.bucket.index.num.buckets", "2")
    assert HudiTable(t.path).to_arrow().sort_by("id").equals(before)


def test_properties_failing_their_checksum(tmp_path):
    t = _table(tmp_path)
    _edit_properties(t, "hoodie.table.name", "renamed")
    with pytest.raises(CorruptTableError, match="checksum"):
        HudiTable(t.path)


def test_unknown_table_type_is_a_corrupt_table(tmp_path):
    t = _table(tmp_path)
    _edit_properties(t, "hoodie.table.type", "MERGE_ON_WRITE")
    with pytest.raises(CorruptTableError, match="hoodie.table.type 'MERGE_ON_WRITE'"):
        HudiTable(t.path)


def test_lost_properties_are_not_replaced_by_a_new_table(tmp_path):
    t = _table(tmp_path)
    (Path(t.path) / ".hoodie" / "hoodie.properties").unlink()
    with pytest.raises(CorruptTableError, match="hoodie.properties.backup"):
        HudiTable(t.path)
    with pytest.raises(CorruptTableError, match="duplicate keys"):
        HudiTable.create(t.path, table_name="dmg", record_key="id", ordering_field="ts", partition_by="dt", buckets=8)
    assert not (Path(t.path) / ".hoodie" / "hoodie.properties").exists()


def test_empty_completed_instant_is_named_by_validate(tmp_path):
    """Rule: an empty completed commit file reads as a commit that wrote nothing (Apache Hudi's reading of
    empty metadata); validate names it as the cause when data files carry its instant time."""
    from hudi_ds.cli.validate import validate

    t = _table(tmp_path)
    first = t.timeline()[0].requested_time
    (Path(t.path) / ".hoodie" / f"{first}.deltacommit").write_bytes(b"")
    HudiTable(t.path).to_arrow()  # reads (as Apache Hudi would) without the lost commit's files
    report = validate(t.path)
    assert not report["ok"]
    assert any(f"{first}.deltacommit is empty" in e and "metadata was lost" in e for e in report["errors"])


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_write_never_hides_a_missing_committed_file(tmp_path, table_type):
    """The next write used to reuse a lost log's name (MOR) or rebuild from the older base (COW), after which the
    lost commit was silently gone and validate passed."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="dmg", record_key="id", ordering_field="ts",
                         table_type=table_type, buckets=1, options={"compaction.schedule.enabled": "false"})
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1]}))
    last = t.write(pa.table({"id": ["a"], "ts": [2]}))
    timeline = t.load_timeline()
    newest = Path(t.path) / timeline.commit_metadata(timeline.find(last)).write_stats()[0].path
    newest.unlink()
    for attempt in (lambda: t.write(pa.table({"id": ["b"], "ts": [3]})), t.to_arrow):
        with pytest.raises(CorruptTableError, match=newest.name):
            attempt()


def test_base_file_value_that_overflows_the_table_type_is_named_not_wrapped(tmp_path):
    """A file whose int64 column holds what the table's int32 column cannot (a hand-edited or foreign file) used
    to read wrapped around: a wrong value, silently."""
    import pyarrow.parquet as pq

    t = HudiTable.create(str(tmp_path / "t"), table_name="dmg", record_key="id", table_type="COPY_ON_WRITE",
                         buckets=1)
    t.write(pa.table({"id": ["a", "b"], "n": pa.array([1, 2], pa.int32())}))
    base = _one(Path(t.path), "*.parquet")
    rows = pq.read_table(base)
    column = rows.schema.get_field_index("n")
    widened = rows.set_column(column, pa.field("n", pa.int64()), pa.array([1, 2**40], pa.int64()))
    pq.write_table(widened.replace_schema_metadata(rows.schema.metadata), base)
    with pytest.raises(CorruptTableError, match=f"{base.name}.*'n'"):
        HudiTable(t.path).to_arrow()
    narrow = widened.set_column(column, pa.field("n", pa.int64()), pa.array([1, 2], pa.int64()))
    pq.write_table(narrow.replace_schema_metadata(rows.schema.metadata), base)
    assert HudiTable(t.path).to_arrow(columns=["id", "n"]).sort_by("id")["n"].to_pylist() == [1, 2]
