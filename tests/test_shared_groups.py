"""Copy-on-write writes whose rows for one bucket reach several tasks, driven task by task without Spark: the task
that claims a file group rewrites its base file, the others stage their rows, and the coordinator merges them into
the group's one new base file. Checked against the dict model, hudi-rs and `hudi-py validate`; the result does not
depend on which task won the claim."""

from __future__ import annotations

import random
from collections import Counter
from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import DictModel
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate
from hudi_ds.files.naming import parse_base_file
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.input import evolve
from hudi_ds.write.messages import TaskResult
from hudi_ds.write.routing import DELETE
from hudi_ds.write.task import TaskWriter

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
COLUMNS = SCHEMA.names


def rec(i: int, ts: int, v: float | None = None) -> dict[str, Any]:
    return {"id": f"k{i}", "ts": ts, "dt": f"d{i % 3}", "v": float(i * 10 + ts) if v is None else v}


def write_tasks(t: HudiTable, parts: Sequence[Sequence[dict[str, Any]]], deletes: Sequence[Sequence[dict]] = (),
                order: Sequence[int] | None = None, operation: str = "upsert") -> str:
    """One write whose task i gets parts[i] (and deletes[i]); tasks run in `order` (default: by id), so the
    first of them to reach a bucket claims it, as the fastest Spark task would."""
    tables = []
    for i, part in enumerate(parts):
        dels = list(deletes[i]) if i < len(deletes) else []
        rs = [{**r, DELETE: False} for r in part] + [{**r, DELETE: True} for r in dels]
        tables.append(pa.Table.from_pylist(rs, schema=SCHEMA.append(pa.field(DELETE, pa.bool_()))))
    current = t.schema if t.timeline() and len(t.schema) else None
    schema = evolve(current, SCHEMA)
    coordinator = Coordinator(t.storage, t.config)
    plan = coordinator.begin(operation, schema)
    results: dict[int, TaskResult] = {}
    for task in order if order is not None else range(len(parts)):
        writer = TaskWriter(plan, task_id=task)
        if tables[task].num_rows:
            writer.write(tables[task])
        results[task] = writer.finish()
    return coordinator.commit(plan, [results[i] for i in sorted(results)])


def base_files(path: str) -> list[Any]:
    out = []
    for p in Path(path).rglob("*.parquet"):
        rel = p.parent.relative_to(path)
        if ".hoodie" not in p.parts:
            out.append(parse_base_file("" if rel == Path(".") else rel.as_posix(), p.name))
    return out


def check(t: HudiTable, model: DictModel) -> pa.Table:
    """The model's rows from both readers, a clean `validate`, and one base file per file group and commit."""
    ours = t.to_arrow()
    assert rows(ours, COLUMNS) == model.sorted_rows(COLUMNS)
    assert rows(hudi_rs(t.path), COLUMNS) == rows(ours, COLUMNS)
    report = validate(t.path)
    assert report["ok"] and not report["warnings"], report["errors"] + report["warnings"]
    versions = Counter((f.partition, f.file_id, f.instant) for f in base_files(t.path))
    assert set(versions.values()) == {1}
    temp = Path(t.path) / ".hoodie" / ".temp"
    assert not temp.exists() or not any(temp.iterdir())  # claims and staged rows are gone
    return ours


def spread(rng: random.Random, items: list[dict[str, Any]], tasks: int) -> list[list[dict[str, Any]]]:
    """Rows dealt to tasks at random, every key's rows to one task (as the README asks)."""
    owner: dict[str, int] = {}
    parts: list[list[dict[str, Any]]] = [[] for _ in range(tasks)]
    for r in items:
        parts[owner.setdefault(r["id"], rng.randrange(tasks))].append(r)
    return parts


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), partitioned=st.booleans(), writes=st.integers(2, 4),
       meta_fields=st.sampled_from(["true", "false"]))
def test_spread_writes_read_as_the_model(tmp_path_factory, seed, partitioned, writes, meta_fields):
    """Also with virtual keys (hoodie.populate.meta.fields=false), whose files say nothing of which rows a task
    wrote."""
    rng = random.Random(seed)
    t = HudiTable.create(str(tmp_path_factory.mktemp("sg") / "t"), table_name="sg", record_key="id",
                         ordering_field="ts", partition_by="dt" if partitioned else None,
                         table_type="COPY_ON_WRITE", buckets=rng.randint(1, 3),
                         options={"hoodie.populate.meta.fields": meta_fields})
    model = DictModel("id", "ts", "dt" if partitioned else None)
    for ts in range(1, writes + 1):
        tasks = rng.randint(1, 4)
        ups = [rec(i, rng.choice([ts, ts, 0])) for i in rng.sample(range(60), rng.randint(1, 40))]
        ids = {r["id"] for r in ups}
        dels = [rec(i, 0) for i in rng.sample(range(60), rng.randint(0, 15)) if f"k{i}" not in ids]
        order = list(range(tasks))
        rng.shuffle(order)
        owner = {r["id"]: rng.randrange(tasks) for r in ups + dels}
        parts = [[r for r in ups if owner[r["id"]] == k] for k in range(tasks)]
        del_parts = [[r for r in dels if owner[r["id"]] == k] for k in range(tasks)]
        write_tasks(t, parts, del_parts, order)
        model.upsert(ups)
        model.delete(dels)
    check(t, model)


def test_merged_file_keeps_each_rows_meta_and_stats(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="sg", record_key="id", ordering_field="ts",
                         table_type="COPY_ON_WRITE", buckets=1)
    model = DictModel("id", "ts")
    first = [rec(i, 1) for i in range(30)]
    c1 = write_tasks(t, spread(random.Random(1), first, 3))  # a new bucket from three tasks
    model.upsert(first)
    ups = [rec(i, 2) for i in range(20, 40)]  # 10 updates, 10 inserts
    dels = [rec(i, 0) for i in range(5)]
    c2 = write_tasks(t, [ups[:7], ups[7:], []], [[], dels[:2], dels[2:]], order=[2, 0, 1])
    model.upsert(ups)
    model.delete(dels)
    ours = check(t, model)
    [stat] = t.load_timeline().commit_metadata(t.timeline()[-1]).write_stats()
    [base] = [f for f in base_files(t.path) if f.instant == c2]
    assert (stat.path, stat.prev_commit, stat.num_writes) == (base.name, c1, 35)
    assert (stat.num_inserts, stat.num_update_writes, stat.num_deletes) == (10, 10, 5)
    assert stat.file_size_in_bytes == (Path(t.path) / base.name).stat().st_size
    seqno = {r["_hoodie_record_key"]: r["_hoodie_commit_seqno"] for r in ours.to_pylist()}
    assert seqno["k20"].startswith(f"{c2}_0_") and seqno["k30"].startswith(f"{c2}_1_")  # the task that wrote it
    assert seqno["k10"].startswith(f"{c1}_")  # untouched rows keep their commit's meta
    assert set(ours["_hoodie_file_name"].to_pylist()) == {base.name}
    assert len(set(seqno.values())) == len(seqno)


@pytest.mark.parametrize("meta_fields", ["true", "false"])
def test_keys_in_several_tasks_resolve_by_the_merge_rule_whoever_claims(tmp_path, meta_fields):
    """Same key in several tasks (a changelog spread over tasks): the highest ordering value wins, a delete
    included, as within one task; ties go to the later task; the same answer whichever task claimed the group,
    with or without virtual keys."""
    parts = [
        [rec(1, 5, 1.0), rec(2, 4, 2.0), rec(4, 3, 4.0), rec(7, 2, 7.0)],
        [rec(1, 3, 1.1), rec(3, 6, 3.1), rec(7, 1, 7.1), rec(8, 0, 8.1), rec(10, 4, 10.1)],
        [rec(2, 4, 2.2), rec(5, 2, 5.2)],
    ]
    deletes = [[rec(3, 0), rec(6, 0), rec(10, 4)], [rec(4, 0)], [rec(9, 0), rec(1, 6)]]
    answers = []
    for order in ([0, 1, 2], [2, 1, 0], [1, 2, 0]):
        t = HudiTable.create(str(tmp_path / "".join(map(str, order))), table_name="sg", record_key="id",
                             ordering_field="ts", table_type="COPY_ON_WRITE", buckets=1,
                             options={"hoodie.populate.meta.fields": meta_fields})
        t.write(pa.Table.from_pylist([rec(i, 1, -1.0) for i in range(1, 11)] + [rec(8, 9, -8.0)], schema=SCHEMA))
        write_tasks(t, parts, deletes, order)
        answers.append(rows(t.to_arrow(), ["id", "ts", "v"]))
        assert rows(hudi_rs(t.path), ["id", "ts", "v"]) == answers[-1]
        assert validate(t.path)["ok"]
    assert answers[0] == answers[1] == answers[2]
    assert answers[0] == [
        ("k10", 4, 10.1),  # a tie between task 0's delete and task 1's row: the later task
        ("k2", 4, 2.2),  # a tie: the later task
        ("k3", 6, 3.1),  # deleted by task 0 at ts 0, written by task 1 at ts 6
        ("k4", 3, 4.0),  # written by task 0 at ts 3, deleted by task 1 at ts 0
        ("k5", 2, 5.2),
        ("k7", 2, 7.0),  # ts 2 beats ts 1
        ("k8", 9, -8.0),  # the base row's higher ts beats task 1's row
    ]  # k1: task 2's delete at ts 6 beats the rows at ts 5 and 3; k6, k9: deleted


def test_buckets_of_a_table_without_record_key_take_rows_from_any_number_of_tasks(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="kl", partition_by="dt", table_type="COPY_ON_WRITE",
                         buckets=2)
    data = pa.Table.from_pylist([{"dt": f"d{i % 2}", "v": i % 3} for i in range(40)])
    for _ in range(2):
        coordinator = Coordinator(t.storage, t.config)
        plan = coordinator.begin("insert", evolve(t.schema if t.timeline() else None, data.schema))
        results = []
        for task in range(5):  # tasks t and t + 2 share a bucket
            writer = TaskWriter(plan, task_id=task)
            writer.write(data.slice(task * 8, 8))
            results.append(writer.finish())
        coordinator.commit(plan, results)
    ours = t.to_arrow()
    assert Counter(zip(ours["dt"].to_pylist(), ours["v"].to_pylist(), strict=True)) == \
        Counter(zip(data["dt"].to_pylist() * 2, data["v"].to_pylist() * 2, strict=True))
    assert rows(hudi_rs(t.path), ["_hoodie_record_key", "dt", "v"]) == rows(ours, ["_hoodie_record_key", "dt", "v"])
    assert validate(t.path)["ok"]
    assert Counter((f.partition, f.instant) for f in base_files(t.path)) == Counter(
        {(p, c): 2 for p in ("d0", "d1") for c in (i.requested_time for i in t.timeline())})



@pytest.mark.parametrize("operation", ["insert_overwrite", "insert_overwrite_table", "bulk_insert"])
def test_other_operations_spread_over_tasks(tmp_path, operation):
    t = HudiTable.create(str(tmp_path / "t"), table_name="sg", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="COPY_ON_WRITE", buckets=2)
    model = DictModel("id", "ts", "dt")
    first = [rec(i, 1) for i in range(45)]
    write_tasks(t, spread(random.Random(2), first, 3))
    model.upsert(first)
    second = [rec(i, 2) for i in range(30, 60) if i % 3 != 2]  # partitions d0 and d1 only
    write_tasks(t, spread(random.Random(3), second, 3), order=[1, 2, 0], operation=operation)
    if operation == "bulk_insert":
        model.upsert(second)
    else:
        model.overwrite(second, whole_table=operation == "insert_overwrite_table")
    check(t, model)
