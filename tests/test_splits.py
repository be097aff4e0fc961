"""Bounded read splits: a file slice cut into row-group parts (plus a log-only part when it has logs) reads
back exactly as the whole slice — every merged row once — for any upsert/delete history (property)."""

from __future__ import annotations

import glob
import json
import os
import tempfile

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import DictModel
from tables import rows

from hudi_ds import HudiTable
from hudi_ds.index.bucket import bucket_for_hash_values
from hudi_ds.read import query
from hudi_ds.read.splits import SlicePart, pack

SCHEMA = pa.schema([("key", pa.string()), ("ts", pa.int64()), ("val", pa.int64())])
COLS = ["key", "ts", "val"]


def rewrite_with_row_groups(table_path: str, rows_per_group: int) -> None:
    """Same rows and footer metadata in every base file, as row groups of `rows_per_group` rows; the commits
    record the new sizes, as if the writer had written them so (a file shorter than its commit says is damage)."""
    sizes = {}
    for base in glob.glob(f"{table_path}/**/*.parquet", recursive=True):
        if "/.hoodie/" in base:
            continue
        pf = pq.ParquetFile(base)
        content, metadata = pf.read(), pf.schema_arrow.metadata
        pq.write_table(content.replace_schema_metadata(metadata), base, row_group_size=rows_per_group,
                       store_schema=False)
        sizes[os.path.relpath(base, table_path)] = os.path.getsize(base)
    for commit in glob.glob(f"{table_path}/.hoodie/*commit"):
        with open(commit) as f:
            meta = json.load(f)
        for stats in meta.get("partitionToWriteStats", {}).values():
            for stat in stats:
                stat["fileSizeInBytes"] = sizes.get(stat.get("path"), stat.get("fileSizeInBytes"))
        with open(commit, "w") as f:
            json.dump(meta, f)


row = st.fixed_dictionaries({
    "key": st.sampled_from([f"k{i}" for i in range(60)]),
    "ts": st.integers(min_value=0, max_value=4),
    "val": st.integers(min_value=-100, max_value=100),
})
batch = st.tuples(st.sampled_from(["upsert", "upsert", "delete"]), st.lists(row, min_size=1, max_size=30))


@settings(max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(first=st.lists(row, min_size=1, max_size=60), later=st.lists(batch, max_size=4),
       rows_per_group=st.integers(min_value=1, max_value=8), max_rows=st.integers(min_value=1, max_value=20))
def test_split_slices_read_back_as_the_model(first, later, rows_per_group, max_rows):
    with tempfile.TemporaryDirectory() as tmp:
        t = HudiTable.create(tmp + "/t", table_name="splits", record_key="key", ordering_field="ts",
                             table_type="MERGE_ON_READ", buckets=2)
        model = DictModel("key", "ts", merge_on_read=True, bucket_of=lambda key: bucket_for_hash_values([key[0]], 2))
        t.write(pa.Table.from_pylist(first, schema=SCHEMA), operation="upsert")
        model.upsert(first)
        rewrite_with_row_groups(t.path, rows_per_group)
        for op, data in later:
            t.write(pa.Table.from_pylist(data, schema=SCHEMA), operation=op)
            model.delete(data) if op == "delete" else model.upsert(data)
        plan = query.plan_snapshot(t.snapshot())
        parts = plan.split(max_bytes=1 << 30, max_rows=max_rows)
        assert {p.file_slice.file_id for p in parts} == {s.file_id for s in plan.slices}
        got = pa.concat_tables([plan.read_part(p) for p in parts])
        assert rows(got, COLS) == model.sorted_rows(COLS)
        assert rows(got, COLS) == rows(t.to_arrow(), COLS)


def test_parts_cover_row_groups_and_logs_once(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="splits", record_key="key", ordering_field="ts",
                         table_type="MERGE_ON_READ", buckets=1)
    t.write(pa.table({"key": [f"k{i}" for i in range(100)], "ts": [1] * 100, "val": list(range(100))}))
    rewrite_with_row_groups(t.path, 10)
    plan = query.plan_snapshot(t.snapshot())
    assert [p.row_groups for p in plan.split(1 << 30, 25)] == [(0, 1), (2, 3), (4, 5), (6, 7), (8, 9)]
    t.write(pa.table({"key": ["k5", "new"], "ts": [2, 2], "val": [-5, -1]}))
    plan = query.plan_snapshot(t.snapshot())
    parts = plan.split(1 << 30, 50)
    assert [(p.row_groups, p.log_only) for p in parts] == [((0, 1, 2, 3, 4), False), ((5, 6, 7, 8, 9), False),
                                                            (None, True)]
    first, second, logs = (plan.read_part(p) for p in parts)
    assert first.num_rows == 50 and second.num_rows == 50
    assert logs.to_pydict()["key"] == ["new"] and -5 in first.to_pydict()["val"]
    assert plan.split(1 << 30, 1000) == [SlicePart(plan.slices[0], None, False, plan.slices[0].size)]


def test_pack_keeps_every_part_once():
    parts = [SlicePart(None, (i,), False, size) for i, size in enumerate([50, 10, 10, 30, 1, 80])]  # type: ignore[arg-type]
    bins = pack(parts, max_bytes=100, open_cost=1, min_partitions=2)
    assert sorted(p.row_groups for b in bins for p in b) == [(i,) for i in range(6)]
    assert all(sum(p.size for p in b) <= 100 for b in bins)


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(0, 10_000), min_size=1, max_size=60), st.integers(1, 8), st.integers(1, 50_000))
def test_pack_balances_the_tasks(sizes, min_partitions, max_bytes):
    """Every part once, in as many tasks as the parallelism asks (more when the total passes max_bytes per task),
    and no task holds more than the emptiest plus one part: the read does not wait for one overfull task."""
    parts = [SlicePart(None, (i,), False, size) for i, size in enumerate(sizes)]  # type: ignore[arg-type]
    bins = pack(parts, max_bytes=max_bytes, open_cost=4, min_partitions=min_partitions)
    assert sorted(p.row_groups for b in bins for p in b) == [(i,) for i in range(len(sizes))]
    total = sum(sizes) + 4 * len(sizes)
    assert len(bins) == min(len(sizes), max(min_partitions, -(-total // max_bytes)))
    loads = [sum(p.size + 4 for p in b) for b in bins]
    assert all(b for b in bins) and max(loads) - min(loads) <= max(sizes) + 4
