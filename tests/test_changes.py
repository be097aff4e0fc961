"""The change feed: replayed over a dict, it reproduces the table; each commit's rows are typed right."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from hudi_ds import HudiTable

SCHEMA = pa.schema([("id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


def replay(changes: pa.Table) -> dict:
    state: dict = {}
    for r in changes.to_pylist():
        ident = (r["_hoodie_partition_path"], r["_hoodie_record_key"])
        if r["_change_type"] in ("insert", "update_postimage"):
            state[ident] = (r["ts"], r["v"])
        elif r["_change_type"] == "delete":
            del state[ident]
    return state


def snapshot_state(t: HudiTable) -> dict:
    return {(r["_hoodie_partition_path"], r["_hoodie_record_key"]): (r["ts"], r["v"]) for r in t.to_arrow().to_pylist()}


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_change_kinds_per_commit(tmp_path, table_type):
    t = HudiTable.create(str(tmp_path / "c"), table_name="c", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type=table_type, buckets=2)
    c1 = t.write(pa.Table.from_pylist([{"id": "a", "dt": "x", "ts": 1, "v": 1}, {"id": "b", "dt": "x", "ts": 1, "v": 2}],
                                      schema=SCHEMA))
    c2 = t.write(pa.Table.from_pylist([{"id": "a", "dt": "x", "ts": 2, "v": 10}, {"id": "c", "dt": "y", "ts": 1, "v": 3}],
                                      schema=SCHEMA))
    c3 = t.write(pa.table({"id": ["b"], "dt": ["x"]}), operation="delete")
    feed = t.changes("0")
    got = sorted((r["_commit_time"], r["_change_type"], r["id"], r["v"]) for r in feed.to_pylist())
    assert got == sorted([
        (c1, "insert", "a", 1), (c1, "insert", "b", 2),
        (c2, "update_preimage", "a", 1), (c2, "update_postimage", "a", 10), (c2, "insert", "c", 3),
        (c3, "delete", "b", 2),
    ])
    assert t.changes(c2).num_rows == 1
    assert [r["_change_type"] for r in t.changes(c1, c2).to_pylist()].count("insert") == 1


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]))
def test_replayed_feed_reproduces_the_table(tmp_path_factory, seed, table_type):
    rng = random.Random(seed)
    path = tmp_path_factory.mktemp("feed") / "t"
    t = HudiTable.create(str(path), table_name="f", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, buckets=2)
    for step in range(rng.randint(1, 6)):
        rows = [{"id": f"k{rng.randrange(12)}", "dt": rng.choice("xy"), "ts": rng.randrange(5), "v": step}
                for _ in range(rng.randint(1, 10))]
        op = rng.choice(["upsert", "upsert", "delete", "insert_overwrite"])
        t.write(pa.Table.from_pylist(rows, schema=SCHEMA), operation=op)
    assert replay(t.changes("0")) == snapshot_state(t)
