"""Audit round 2 (issue 28): non-hive partition values that start with one letter and ':' (``a:b``) are relative
folders inside the table on POSIX and object stores, not Windows drives: written, updated and read back (our
reader and hudi-rs) with and without url-encoding, while a drive's root (``C:/...``) stays refused."""

from __future__ import annotations

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import CorruptTableError, HudiTable, InvalidDataError
from hudi_ds.storage import require_inside

PART = "_hoodie_partition_path"


@pytest.mark.parametrize("url_encode", [False, True])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_SIMPLE"])
def test_a_value_like_a_drive_letter_is_a_partition(tmp_path, url_encode, index):
    base = str(tmp_path / "t")
    t = HudiTable.create(base, table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="MERGE_ON_READ", options={
                             "hoodie.index.type": index, "hoodie.datasource.write.partitionpath.urlencode": url_encode,
                             "hoodie.datasource.write.hive_style_partitioning": False})
    values = ["a:b", "c:d:e", "ab:c"] + (["q:"] if url_encode else [])  # "q:/f" names a drive
    n = len(values)
    ids = [f"k{i}" for i in range(len(values))]
    t.write(pa.table({"id": ids, "ts": [1] * n, "dt": values}))
    t.write(pa.table({"id": ids, "ts": [2] * n, "dt": values}))  # updates found in those partitions
    # escapePathName escapes ':' as %3A when url-encoding is on
    paths = [v.replace(":", "%3A") if url_encode else v for v in values]
    assert sorted((tmp_path / "t" / p).is_dir() for p in paths) == [True] * n
    want = sorted(zip(ids, values, [2] * n, paths, strict=True), key=repr)
    assert rows(t.to_arrow(columns=["id", "dt", "ts", PART]), ["id", "dt", "ts", PART]) == want
    assert rows(hudi_rs(base), ["id", "dt", "ts", PART]) == want
    t.run_compaction()
    assert rows(hudi_rs(base), ["id", "dt", "ts", PART]) == want
    assert t.to_arrow(filters=[("dt", "=", "a:b")], columns=["id"])["id"].to_pylist() == ["k0"]


@pytest.mark.parametrize("rel", ["C:/Windows/x.parquet", "c:", "C:"])
def test_a_drive_root_is_still_refused(rel):
    with pytest.raises(CorruptTableError, match="absolute"):
        require_inside(rel)


@pytest.mark.parametrize("rel", ["a:b", "a%3Ab", "a:b/c:d/f.parquet", "Z%3A", "Z%3A/f.parquet"])
def test_a_colon_inside_a_relative_path_passes(rel):
    assert require_inside(rel) == rel


def test_a_drive_alone_is_refused_as_data_without_url_encoding(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         options={"hoodie.datasource.write.hive_style_partitioning": False})
    with pytest.raises(InvalidDataError, match="'q:'.*urlencode"):
        t.write(pa.table({"id": ["a", "b"], "ts": [1, 1], "dt": ["q:", "x"]}))
    assert t.to_arrow().num_rows == 0 and sorted(p.name for p in (tmp_path / "t").iterdir()) == [".hoodie"]
