"""Audit round 2 (issue 28): lookup-index tables through overwrites and table services. insert_overwrite and
insert_overwrite_table replace file groups a global index then no longer finds keys in; merge-on-read tables whose
every file is small take new keys into rewrites of their small files between compactions and cleans. Our reader
and hudi-rs read what a model of last-writer-wins upserts says."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable

COLUMNS = ["id", "dt", "ts", "v", "_hoodie_partition_path"]
GLOBAL = ["GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX"]


def batch(ids: list[str], dts: list[str], ts: list[int], v: list[str]) -> pa.Table:
    return pa.table({"id": ids, "dt": dts, "ts": ts, "v": v})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("index", GLOBAL)
@pytest.mark.parametrize("operation", ["insert_overwrite", "insert_overwrite_table"])
def test_upserts_after_an_overwrite_find_only_the_keys_it_kept(tmp_path, table_type, index, operation):
    base = str(tmp_path / "t")
    t = HudiTable.create(base, table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, options={
                             "hoodie.index.type": index, "hoodie.write.table.version": "9",
                             "hoodie.datasource.write.hive_style_partitioning": True,
                             "hoodie.record.index.update.partition.path": "true"})
    t.write(batch(["a", "b", "c", "d"], ["p1", "p1", "p2", "p2"], [1, 1, 1, 1], ["a1", "b1", "c1", "d1"]))
    t.write(batch(["a"], ["p1"], [2], ["a2"]))  # merge-on-read: a log
    t.write(batch(["a", "e"], ["p1", "p1"], [0, 0], ["a3", "e3"]), operation=operation)  # replaces, whatever ts
    held = {"a": ("p1", 0, "a3"), "e": ("p1", 0, "e3")}
    if operation == "insert_overwrite":
        held.update({"c": ("p2", 1, "c1"), "d": ("p2", 1, "d1")})
    # b was overwritten: a new key; c moves (or is new); a is updated in place; e moves
    t.write(batch(["b", "c", "a", "e"], ["p2", "p1", "p1", "p2"], [5, 5, 5, 5], ["b5", "c5", "a5", "e5"]))
    held.update({k: (dt, 5, f"{k}5") for k, dt in [("b", "p2"), ("c", "p1"), ("a", "p1"), ("e", "p2")]})
    want = sorted([(k, dt, ts, v, f"dt={dt}") for k, (dt, ts, v) in held.items()], key=repr)
    assert rows(t.to_arrow(columns=COLUMNS), COLUMNS) == want
    assert rows(hudi_rs(base), COLUMNS) == want
    if table_type == "MERGE_ON_READ":
        t.run_compaction()
        t.clean(retain_commits=1)
        assert rows(t.to_arrow(columns=COLUMNS), COLUMNS) == want == rows(hudi_rs(base), COLUMNS)


@pytest.mark.parametrize("seed", range(10))
def test_small_file_rewrites_between_compactions_and_cleans(tmp_path, seed):
    """Files stay small (every update rewrites them) or grow past the limit (updates go to logs), by seed."""
    rnd = random.Random(seed)
    index = ["SIMPLE", "BLOOM", "GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX"][seed % 5]
    is_global = index in GLOBAL
    base = str(tmp_path / "t")
    t = HudiTable.create(base, table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="MERGE_ON_READ", options={
                             "hoodie.index.type": index, "hoodie.write.table.version": "9",
                             "hoodie.record.index.update.partition.path": "true", "compaction.schedule.enabled": "false",
                             "hoodie.merge.small.file.group.candidates.limit": str(1 + seed % 3),
                             "hoodie.parquet.max.file.size": str([4000, 20000][seed % 2]),
                             "hoodie.parquet.small.file.limit": str([104857600, 3000, 2000][seed % 3]),
                             "hoodie.copyonwrite.record.size.estimate": "40"})
    model: dict[object, tuple[str, str, int, str]] = {}
    ts = 0
    for step in range(8):
        op = ["upsert", "upsert", "delete", "compact", "upsert", "clean", "upsert", "compact"][step]
        if op == "upsert":
            rows_in: dict[object, tuple[str, str, int, str]] = {}
            for _ in range(rnd.randint(10, 60)):
                key, dt = f"k{rnd.randint(0, 80)}", rnd.choice(["p1", "p2", "p3"])
                ts += 1
                rows_in[key if is_global else (key, dt)] = (key, dt, ts, f"s{step}")
            data = list(rows_in.values())
            t.write(batch(*[[r[i] for r in data] for i in range(4)]))
            model.update(rows_in)
        elif op == "delete":
            gone = rnd.sample(sorted(model, key=repr), min(len(model), 8))
            data = [model.pop(k) for k in gone]
            t.write(batch(*[[r[i] for r in data] for i in range(4)]), operation="delete")
        elif op == "compact":
            t.compact()
        else:
            t.clean(retain_commits=1)
        want = sorted(model.values(), key=repr)
        assert rows(t.to_arrow(columns=COLUMNS[:4]), COLUMNS[:4]) == want, (index, step, op)
    assert rows(hudi_rs(base), COLUMNS[:4]) == want
