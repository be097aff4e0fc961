"""Rows that mark themselves as deletes (`_hoodie_is_deleted`, hoodie.payload.delete.field/marker, AWS DMS's Op=D)
as Apache Hudi's writers take them: an upsert deletes their keys, an insert drops them; any history of such writes
reads back as the dict model, in our reader and in hudi-rs."""

from __future__ import annotations

import tempfile

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import DictModel
from tables import hudi_rs, rows

from hudi_ds import ConfigError, HudiTable, InvalidDataError, TableExistsError
from hudi_ds.config.properties import loads
from hudi_ds.index.bucket import bucket_for_hash_values

COLS = ["key", "part", "ts", "val"]
DMS = {"hoodie.datasource.write.payload.class": "org.apache.hudi.common.model.AWSDmsAvroPayload"}
CUSTOM = {"hoodie.payload.delete.field": "kind", "hoodie.payload.delete.marker": "gone"}

row = st.fixed_dictionaries({
    "key": st.sampled_from([f"k{i}" for i in range(8)]),
    "part": st.sampled_from(["p1", "p2"]),
    "ts": st.integers(min_value=0, max_value=5),
    "val": st.integers(min_value=-100, max_value=100),
    "deleted": st.booleans(),
})
batch = st.tuples(st.sampled_from(["upsert", "upsert", "insert"]), st.lists(row, min_size=1, max_size=15))

# how rows say they are deletes: (table options, the columns a row carries for `deleted`)
MARKERS = {
    "_hoodie_is_deleted": ({}, lambda d: {"_hoodie_is_deleted": d}),
    "custom field": (CUSTOM, lambda d: {"kind": "gone" if d else "live"}),
    "AWS DMS": (DMS, lambda d: {"Op": "D" if d else "U"}),
}


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), version=st.sampled_from([6, 9]),
       marker=st.sampled_from(sorted(MARKERS)), batches=st.lists(batch, min_size=1, max_size=5))
def test_any_history_with_marked_deletes_matches_the_model(table_type, version, marker, batches):
    options, cells = MARKERS[marker]
    event_time = marker != "AWS DMS"  # AWSDmsAvroPayload merges by commit time
    with tempfile.TemporaryDirectory() as tmp:
        t = HudiTable.create(tmp + "/t", table_name="dm", record_key="key", ordering_field="ts", partition_by="part",
                             table_type=table_type, buckets=2,
                             options={"hoodie.write.table.version": str(version), "compaction.delta_commits": 3,
                                      **options})
        writer = HudiTable(t.path, options=options if version == 6 and marker == "custom field" else None)
        model = DictModel("key", "ts" if event_time else None, "part", merge_on_read=table_type == "MERGE_ON_READ",
                          bucket_of=lambda key: bucket_for_hash_values([str(key[0])], 2))
        for op, data in batches:
            written = [{**{c: r[c] for c in COLS}, **cells(r["deleted"])} for r in data]
            before = _compactions(t)
            writer.write(pa.Table.from_pylist(written), operation=op)
            if op == "insert":  # Hudi's create handle writes no deleted record
                model.upsert([w for w, r in zip(written, data, strict=True) if not r["deleted"]])
            else:
                flags = {id(w): r["deleted"] for w, r in zip(written, data, strict=True)}
                model.changes(written, lambda w, flags=flags: flags[id(w)])
            if _compactions(t) > before:
                model.compact()
        expected = model.sorted_rows(COLS)
        assert rows(t.to_arrow(), COLS) == expected
        if (event_time or table_type == "COPY_ON_WRITE") and (marker != "AWS DMS" or version == 9):
            assert rows(hudi_rs(t.path), COLS) == expected  # (hudi-rs refuses AWSDmsAvroPayload on version 6)


def _compactions(t: HudiTable) -> int:
    return sum(i.action == "commit" for i in t.timeline()) if t.config.is_mor else 0


def _props(path: str) -> dict[str, str]:
    with open(path + "/.hoodie/hoodie.properties", encoding="latin-1") as f:
        return loads(f.read())


@pytest.mark.parametrize("version", [6, 8, 9])
def test_the_table_records_its_delete_marker_as_apache_hudi_does(tmp_path, version):
    """Version 9 stores the custom marker under hoodie.record.merge.property.*; an AWS DMS table keeps its payload
    class on versions 6 and 8 (its Op=D rule comes with it) and the marker on 9."""
    opts = {"hoodie.write.table.version": str(version)}
    custom = HudiTable.create(str(tmp_path / "custom"), table_name="c", record_key="id", ordering_field="ts",
                              options={**opts, **CUSTOM})
    dms = HudiTable.create(str(tmp_path / "dms"), table_name="d", record_key="id", ordering_field="ts",
                           options={**opts, **DMS})
    custom_props, dms_props = _props(custom.path), _props(dms.path)
    prefix = "hoodie.record.merge.property.hoodie.payload.delete."
    if version == 9:
        assert (custom_props[prefix + "field"], custom_props[prefix + "marker"]) == ("kind", "gone")
        assert (dms_props[prefix + "field"], dms_props[prefix + "marker"]) == ("Op", "D")
        assert dms_props["hoodie.record.merge.mode"] == "COMMIT_TIME_ORDERING"
    else:
        assert not any(k.startswith(prefix) for k in {**custom_props, **dms_props})
        assert dms_props["hoodie.compaction.payload.class"] == DMS["hoodie.datasource.write.payload.class"]
    assert HudiTable(dms.path).config.delete_field == "Op"
    assert HudiTable(custom.path).config.delete_field == ("kind" if version == 9 else None)
    # the DMS rule needs no option on any version: Op=D deletes
    HudiTable(dms.path).write(pa.table({"id": ["a", "b"], "ts": [1, 1], "Op": ["I", "I"]}))
    HudiTable(dms.path).write(pa.table({"id": ["a"], "ts": [0], "Op": ["D"]}))  # commit time: a lower ts deletes too
    assert HudiTable(dms.path).to_arrow()["id"].to_pylist() == ["b"]
    if version == 9:  # hudi-rs 0.5 refuses the payload class of versions 6 and 8 ("a merger of its own")
        assert hudi_rs(dms.path)["id"].to_pylist() == ["b"]


def test_bad_marker_input_is_refused_and_writes_nothing(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         options={"hoodie.write.table.version": "9", **CUSTOM})
    t.write(pa.table({"id": ["a"], "ts": [1], "kind": ["live"]}))
    commits = len(t.timeline())
    with pytest.raises(InvalidDataError, match="_hoodie_is_deleted is string.*cast it to boolean"):
        t.write(pa.table({"id": ["a"], "ts": [2], "kind": ["live"], "_hoodie_is_deleted": ["true"]}))
    with pytest.raises(ConfigError, match="hoodie.payload.delete.field and hoodie.payload.delete.marker go together"):
        HudiTable(t.path, options={"hoodie.payload.delete.field": "kind"})
    with pytest.raises(TableExistsError, match="whose deletes are marked by kind=gone"):
        HudiTable(t.path, options={"hoodie.payload.delete.field": "kind", "hoodie.payload.delete.marker": "x"}).write(
            pa.table({"id": ["a"], "ts": [3], "kind": ["x"]}))
    assert len(HudiTable(t.path).timeline()) == commits
    assert HudiTable(t.path).to_arrow(columns=["id", "ts"]).to_pylist() == [{"id": "a", "ts": 1}]


def test_a_marked_delete_of_a_missing_key_is_a_no_op_and_bulk_insert_drops_marked_rows(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         table_type="MERGE_ON_READ", buckets=2)
    t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "_hoodie_is_deleted": [False, True]}), operation="bulk_insert")
    assert t.to_arrow(columns=["id"])["id"].to_pylist() == ["a"]
    t.write(pa.table({"id": ["zz"], "ts": [5], "_hoodie_is_deleted": [True]}))
    assert rows(t.to_arrow(), ["id", "ts", "_hoodie_is_deleted"]) == [("a", 1, False)]
    assert rows(hudi_rs(t.path), ["id", "ts", "_hoodie_is_deleted"]) == [("a", 1, False)]
