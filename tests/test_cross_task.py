"""One write whose tasks hold versions of the same key, a delete among them (Spark hands rows to tasks in any
order): driven task by task without Spark, through the real coordinator. The highest ordering value wins, as
within one task (a tie goes to the later task), whatever the order of the tasks' log files (merge-on-read) or
whichever task claimed the file group (copy-on-write), in our reader and in hudi-rs."""

from __future__ import annotations

import random
from collections.abc import Sequence
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import DictModel
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate
from hudi_ds.index.bucket import bucket_for_hash_values
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.input import evolve
from hudi_ds.write.routing import DELETE
from hudi_ds.write.task import TaskWriter

pytestmark = pytest.mark.interop

SCHEMA = pa.schema([("id", pa.string()), ("ts", pa.int64()), ("dt", pa.string()), ("v", pa.float64())])
COLUMNS = SCHEMA.names
Version = tuple[dict[str, Any], bool]  # (row, is_delete)


def write_tasks(t: HudiTable, parts: Sequence[Sequence[Version]]) -> str:
    """One upsert whose task i gets parts[i]: rows and deletes in one input, as a changelog write has them."""
    schema = evolve(t.schema if t.timeline() and len(t.schema) else None, SCHEMA)
    coordinator = Coordinator(t.storage, t.config)
    plan = coordinator.begin("upsert", schema)
    results = []
    for task, part in enumerate(parts):
        writer = TaskWriter(plan, task_id=task)
        if part:
            writer.write(pa.Table.from_pylist([{**r, DELETE: d} for r, d in part],
                                              schema=SCHEMA.append(pa.field(DELETE, pa.bool_()))))
        results.append(writer.finish())
    return coordinator.commit(plan, results)


def rec(i: int, ts: int) -> dict[str, Any]:
    return {"id": f"k{i}", "ts": ts, "dt": f"d{i % 2}", "v": float(i * 100 + ts)}


def winners(parts: Sequence[Sequence[Version]]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
    """The write's version of each key: highest ts, then later task, then later row (rows, deletes)."""
    best: dict[str, tuple[tuple[int, int, int], dict[str, Any], bool]] = {}
    for task, part in enumerate(parts):
        for pos, (r, d) in enumerate(part):
            rank = (r["ts"], task, pos)
            if r["id"] not in best or rank > best[r["id"]][0]:
                best[r["id"]] = (rank, r, d)
    return [r for _, r, d in best.values() if not d], [r for _, r, d in best.values() if d]


def apply(model: DictModel, parts: Sequence[Sequence[Version]]) -> None:
    ups, dels = winners(parts)
    model.upsert(ups)
    model.delete(dels)


def check(t: HudiTable, model: DictModel) -> None:
    want = model.sorted_rows(COLUMNS)
    assert rows(t.to_arrow(), COLUMNS) == want
    assert rows(hudi_rs(t.path), COLUMNS) == want
    report = validate(t.path)
    assert report["ok"], report["errors"]


def new_table(path: str, buckets: int, table_type: str = "MERGE_ON_READ") -> tuple[HudiTable, DictModel]:
    """A table whose every file group exists (a new group's first write is its base file, by one task)."""
    t = HudiTable.create(path, table_name="ct", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, buckets=buckets)
    model = DictModel("id", "ts", "dt", merge_on_read=table_type == "MERGE_ON_READ",
                      bucket_of=lambda key: bucket_for_hash_values([key[0]], buckets))
    first = [(rec(i, 1), False) for i in range(20)]
    write_tasks(t, [first])
    apply(model, [first])
    return t, model


def test_delete_and_row_of_one_key_in_two_tasks(tmp_path):
    t, model = new_table(str(tmp_path / "t"), 1)
    parts: list[list[Version]] = [
        [(rec(0, 5), False), (rec(1, 7), False), (rec(2, 5), True), (rec(3, 5), False), (rec(6, 3), False)],
        [(rec(0, 6), True), (rec(1, 6), True), (rec(2, 5), False), (rec(3, 5), True), (rec(7, 4), True)],
    ]
    write_tasks(t, parts)
    apply(model, parts)
    gone = {"k0", "k3", "k7"}  # k3: a tie goes to the later task
    assert {r["id"] for r in model.rows.values()} == {f"k{i}" for i in range(20)} - gone
    check(t, model)
    # the settling log file is the group's last of the commit, and the commit lists it
    stats = t.load_timeline().commit_metadata(t.timeline()[-1]).write_stats()
    assert len(stats) == 2 * 2 + 2  # two tasks x two partitions, plus one settling file per partition


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("owner_deletes", [True, False])
def test_a_row_the_table_outranks_still_beats_a_lower_delete(tmp_path, table_type, owner_deletes):
    """The table holds k0 at ts 4; one task deletes it at ts 2, another writes it at ts 3. The write's own merge
    picks the row (3 > 2), which then loses to the table's row (4 > 3): k0 stays as it was, whichever task
    rewrites the copy-on-write base file."""
    t, model = new_table(str(tmp_path / "t"), 1, table_type)
    write_tasks(t, [[(rec(0, 4), False)]])
    apply(model, [[(rec(0, 4), False)]])
    delete, row = [(rec(0, 2), True)], [(rec(0, 3), False)]
    parts = [delete, row] if owner_deletes else [row, delete]
    write_tasks(t, parts)
    apply(model, parts)
    assert [r for r in model.sorted_rows(COLUMNS) if r[0] == "k0"] == [("k0", 4, "d0", 4.0)]
    check(t, model)


@settings(max_examples=30, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), writes=st.integers(1, 3),
       table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]))
def test_versions_spread_over_tasks_read_as_the_model(tmp_path_factory, seed, writes, table_type):
    rng = random.Random(seed)
    t, model = new_table(str(tmp_path_factory.mktemp("ct") / "t"), rng.randint(1, 2), table_type)
    for _ in range(writes):
        tasks = rng.randint(2, 3)
        parts: list[list[Version]] = [[] for _ in range(tasks)]
        for i in rng.sample(range(20), rng.randint(1, 20)):
            for _ in range(rng.randint(1, 3)):  # several versions of a key, each in any task
                parts[rng.randrange(tasks)].append((rec(i, rng.randint(2, 6)), rng.random() < 0.4))
        write_tasks(t, parts)
        apply(model, parts)
    check(t, model)
