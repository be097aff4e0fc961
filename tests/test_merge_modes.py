"""Record merge modes through the Python API: the properties each table version records for a mode (as Apache Hudi
1.x writes them), what commit-time ordering does to a write and its reads, and merge settings hudi-py does not
have, refused by name before anything is read or written."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from hudi_ds import ConfigError, HudiTable, SchemaError, UnsupportedTableError
from hudi_ds.config.properties import dumps, loads
from hudi_ds.log.format import HeaderKey, read_blocks

COMMIT_TIME = {"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}
MODEL = "org.apache.hudi.common.model."


def create(path: Path, version: int = 6, table_type: str = "MERGE_ON_READ", ordering: str | None = "ts",
           **options: str) -> HudiTable:
    return HudiTable.create(str(path), table_name="t", record_key="id", ordering_field=ordering,
                            table_type=table_type, options={"hoodie.write.table.version": version, **options})


def props(t: HudiTable) -> dict[str, str]:
    return loads((Path(t.path) / ".hoodie" / "hoodie.properties").read_text())


def values(t: HudiTable) -> dict[int, str]:
    return {r["id"]: r["v"] for r in t.to_arrow(columns=["id", "v"]).to_pylist()}


@pytest.mark.parametrize("version,expected,absent", [
    (6, {"hoodie.compaction.payload.class": MODEL + "OverwriteWithLatestAvroPayload",
         "hoodie.compaction.record.merger.strategy": "ce9acb64-bde0-424c-9b91-f6ebba25356d",
         "hoodie.table.precombine.field": "ts"}, {"hoodie.record.merge.mode"}),
    (8, {"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING",
         "hoodie.record.merge.strategy.id": "ce9acb64-bde0-424c-9b91-f6ebba25356d",
         "hoodie.compaction.payload.class": MODEL + "OverwriteWithLatestAvroPayload",
         "hoodie.table.precombine.field": "ts"}, set()),
    (9, {"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING", "hoodie.table.ordering.fields": "ts"},
     {"hoodie.record.merge.strategy.id", "hoodie.compaction.payload.class"}),
])
def test_each_version_records_commit_time_ordering_as_hudi_does(tmp_path, version, expected, absent):
    t = create(tmp_path / "t", version, **COMMIT_TIME)
    p = props(t)
    assert {k: p.get(k) for k in expected} == expected
    assert not absent & set(p)
    assert HudiTable(t.path).config.merge_mode == "COMMIT_TIME_ORDERING"


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("version", [6, 8, 9])
def test_commit_time_ordering_keeps_the_last_write_whatever_its_ordering_value(tmp_path, version, table_type):
    t = create(tmp_path / "t", version, table_type, **COMMIT_TIME)
    first = t.write(pa.table({"id": [1, 2, 3], "ts": [5, 5, 5], "v": ["a", "b", "c"]}))
    # within one batch the last row of a key wins (Hudi's precombine in commit-time mode), across batches the later
    t.write(pa.table({"id": [1, 1, 2, 3], "ts": [9, 1, 0, 7], "v": ["x", "y", "z", "w"]}))
    t.write(pa.table({"id": [3], "ts": [0]}), operation="delete")
    assert values(t) == {1: "y", 2: "z"}
    assert sorted(t.incremental(first)["v"].to_pylist()) == ["y", "z"]
    changes = t.changes("earliest")
    changes = changes.filter(pc.not_equal(changes["_commit_time"], first))  # the changes after the first
    assert sorted(zip(changes["_change_type"].to_pylist(), changes["v"].to_pylist(), strict=True)) == [
        ("delete", "w"), ("update_postimage", "w"), ("update_postimage", "y"), ("update_postimage", "z"),
        ("update_preimage", "a"), ("update_preimage", "b"), ("update_preimage", "c")]
    if table_type == "MERGE_ON_READ":
        t.compact()
        assert values(t) == {1: "y", 2: "z"}


def test_commit_time_ordering_needs_no_ordering_field(tmp_path):
    t = create(tmp_path / "t", 9, ordering=None, **COMMIT_TIME)
    t.write(pa.table({"id": [1, 1], "v": ["a", "b"]}))
    t.write(pa.table({"id": [1], "v": ["c"]}))
    assert values(t) == {1: "c"}
    assert "hoodie.table.ordering.fields" not in props(t)


def test_an_event_time_table_still_needs_the_ordering_column(tmp_path):
    t = create(tmp_path / "t", 9)
    with pytest.raises(Exception, match="ordering \\(precombine\\) column 'ts' is missing"):
        t.write(pa.table({"id": [1], "v": ["a"]}))


def test_contradicting_merge_settings_are_refused(tmp_path):
    with pytest.raises(ConfigError, match="contradicts the payload class"):
        create(tmp_path / "t", 9, **COMMIT_TIME,
               **{"hoodie.datasource.write.payload.class": MODEL + "DefaultHoodieRecordPayload"})
    with pytest.raises(ConfigError, match="CUSTOM merger is Java code"):
        create(tmp_path / "t", 9, **{"hoodie.record.merge.mode": "CUSTOM"})
    with pytest.raises(ConfigError, match="com.example.MyPayload"):
        create(tmp_path / "t", 6, **{"hoodie.datasource.write.payload.class": "com.example.MyPayload"})
    assert not (tmp_path / "t").exists()


@pytest.mark.parametrize("setting,named", [
    ({"hoodie.compaction.payload.class": "com.example.MyPayload", "hoodie.record.merge.mode": "CUSTOM",
      "hoodie.record.merge.strategy.id": "00000000-0000-0000-0000-000000000000"}, "com.example.MyPayload"),
    ({"hoodie.record.merge.mode": "CUSTOM", "hoodie.record.merge.strategy.id": "1a2b"}, "strategy 1a2b"),
])
def test_a_table_with_a_custom_merger_is_refused_for_reads_and_writes(tmp_path, setting, named):
    t = create(tmp_path / "t", 8)
    t.write(pa.table({"id": [1], "ts": [1], "v": ["a"]}))
    path = Path(t.path) / ".hoodie" / "hoodie.properties"
    path.write_text(dumps({**props(t), **setting}, "edited"))
    custom = HudiTable(t.path)
    assert custom.config.merge_mode == "CUSTOM"
    before = sorted(p for p in Path(t.path).rglob("*") if p.is_file())
    with pytest.raises(UnsupportedTableError, match=named):
        custom.to_arrow()
    with pytest.raises(UnsupportedTableError, match=named):
        custom.write(pa.table({"id": [1], "ts": [2], "v": ["b"]}))
    assert sorted(p for p in Path(t.path).rglob("*") if p.is_file()) == before


def test_version_6_tables_of_apache_hudi_merge_by_their_payload(tmp_path):
    """Hudi 0.x's merge-on-read tables carry OverwriteWithLatestAvroPayload (commit time) and the event-time
    strategy id; on version 6 the payload decides, as Hudi 1.x's reader infers it."""
    t = create(tmp_path / "t", 6)
    path = Path(t.path) / ".hoodie" / "hoodie.properties"
    path.write_text(dumps({**props(t), "hoodie.compaction.payload.class": MODEL + "OverwriteWithLatestAvroPayload",
                           "hoodie.compaction.record.merger.strategy": "eeb8d96f-b1e4-49fd-bbf8-28ac514178e5"}, "x"))
    assert HudiTable(t.path).config.merge_mode == "COMMIT_TIME_ORDERING"


def wide(t: HudiTable) -> dict[int, tuple]:
    return {r["id"]: (r["name"], r["price"], r["stock"])
            for r in t.to_arrow(columns=["id", "name", "price", "stock"]).to_pylist()}


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_write_carrying_some_columns_keeps_the_others(tmp_path, table_type):
    """The issue's example: t.write(pa.table({"id": ..., "ts": ..., "price": ...})) on a wider table."""
    t = create(tmp_path / "t", 9, table_type, **{"hoodie.table.partial.update.mode": "KEEP_VALUES"})
    t.write(pa.table({"id": [1, 2], "ts": [1, 1], "name": ["a", "b"], "price": [1.0, 2.0], "stock": [5, 6]}))
    t.write(pa.table({"id": [1, 3], "ts": [2, 2], "price": [1.5, 3.0]}))
    t.write(pa.table({"id": [1], "ts": [3], "stock": [None]}, schema=pa.schema([("id", pa.int64()),
                                                                               ("ts", pa.int64()),
                                                                               ("stock", pa.int64())])))
    assert wide(t) == {1: ("a", 1.5, None), 2: ("b", 2.0, 6), 3: (None, 3.0, None)}
    assert props(t)["hoodie.table.partial.update.mode"] == "KEEP_VALUES"
    if table_type == "MERGE_ON_READ":
        logs = [p for p in Path(t.path).rglob("*.log.*") if ".hoodie" not in p.relative_to(t.path).parts]
        headers = [b.header for p in logs for b in read_blocks(p.read_bytes(), str(p))]
        assert headers and all(h.get(HeaderKey.IS_PARTIAL) == "true" for h in headers)
        t.compact()
        assert wide(t) == {1: ("a", 1.5, None), 2: ("b", 2.0, 6), 3: (None, 3.0, None)}


def test_null_does_not_overwrite_under_ignore_defaults_and_the_version_6_payload(tmp_path):
    for version, options in [(9, {"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"}),
                             (6, {"hoodie.datasource.write.payload.class": MODEL + "PartialUpdateAvroPayload"})]:
        t = create(tmp_path / f"v{version}", version, **options)
        t.write(pa.table({"id": [1], "ts": [1], "name": ["a"], "price": [1.0], "stock": [5]}))
        t.write(pa.table({"id": [1, 1], "ts": [2, 3], "name": [None, "b"], "price": [2.0, None],
                          "stock": pa.array([None, None], pa.int64())}))
        assert wide(t) == {1: ("b", 2.0, 5)}
    assert props(t)["hoodie.compaction.payload.class"] == MODEL + "PartialUpdateAvroPayload"


@pytest.mark.parametrize("version,options,message", [
    (8, {"hoodie.table.partial.update.mode": "KEEP_VALUES"}, "needs table version 9"),
    (6, {"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"}, "PartialUpdateAvroPayload"),
    (9, {"hoodie.table.partial.update.mode": "IGNORE_MARKERS"}, "set both or neither"),
    (9, {"hoodie.write.partial.update.custom.marker": "?"}, "set both or neither"),
])
def test_partial_update_settings_a_table_cannot_record_are_refused(tmp_path, version, options, message):
    with pytest.raises(ConfigError, match=message):
        create(tmp_path / "t", version, **options)
    assert not (tmp_path / "t").exists()


def test_a_partial_write_without_the_ordering_field_is_refused(tmp_path):
    t = create(tmp_path / "t", 9, **{"hoodie.table.partial.update.mode": "KEEP_VALUES"})
    t.write(pa.table({"id": [1], "ts": [1], "name": ["a"]}))
    before = sorted(p for p in Path(t.path).rglob("*") if p.is_file())
    with pytest.raises(SchemaError, match="ordering \\(precombine\\) column 'ts' is missing"):
        t.write(pa.table({"id": [1], "name": ["b"]}))
    assert sorted(p for p in Path(t.path).rglob("*") if p.is_file()) == before


@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE", "BLOOM"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_lookup_index_tables_merge_by_their_mode(tmp_path, index, table_type):
    """Commit-time ordering and partial updates on tables whose write looks keys up in the file slices."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts", partition_by="p",
                         table_type=table_type, options={**COMMIT_TIME, "hoodie.index.type": index,
                                                         "hoodie.table.partial.update.mode": "KEEP_VALUES",
                                                         "hoodie.write.table.version": 9})
    t.write(pa.table({"id": [1, 2], "ts": [5, 5], "p": ["a", "a"], "v": ["a", "b"], "w": [1, 2]}))
    t.write(pa.table({"id": [1, 2, 2], "ts": [6, 9, 1], "p": ["a", "a", "a"], "w": [10, None, 20]}))
    got = {r["id"]: (r["ts"], r["v"], r["w"]) for r in t.to_arrow(columns=["id", "ts", "v", "w"]).to_pylist()}
    assert got == {1: (6, "a", 10), 2: (1, "b", 20)}
