"""Queries that reach back past the active timeline (issue 30, item 1): incremental reads, the change feed and
time travel read archived commits from their archived metadata, and fail with CleanedInstantsError only when
cleaning removed file versions the answer needs. Property test: random histories with random archiving and
cleaning settings, every range equal to a model of the commits or refused."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import CleanedInstantsError, HudiTable

SCHEMA = pa.schema([("id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("v", pa.int64())])


def _rows(keys: list[str], dt: str, step: int) -> pa.Table:
    return pa.Table.from_pylist([{"id": k, "dt": dt, "ts": step, "v": step} for k in keys], schema=SCHEMA)


def _archived(t: HudiTable, commit: str) -> bool:
    return t.snapshot().timeline.find(commit) is None


@pytest.mark.parametrize("cdc", [False, True])
def test_thirty_six_commits_incremental_and_changes_over_archived_commits(tmp_path, cdc):
    """The issue's scenario: 36 small commits with the default archiving options, nothing cleaned (every commit
    writes its own partition); ranges reaching into the archived commits return every change."""
    options = {"hoodie.table.cdc.enabled": "true"} if cdc else {}
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type="COPY_ON_WRITE", buckets=1, options=options)
    commits = [t.write(_rows([f"k{n}_{i}" for i in range(3)], f"d{n:02d}", n)) for n in range(36)]
    assert _archived(t, commits[2]) and _archived(t, commits[10])
    assert t.incremental(commits[2]).num_rows == 99
    assert sorted(t.incremental(commits[2], commits[10])["id"].to_pylist()) == sorted(
        f"k{n}_{i}" for n in range(3, 11) for i in range(3))
    feed = t.changes(commits[2], commits[10]).to_pylist()
    assert sorted((r["_commit_time"], r["_change_type"], r["id"]) for r in feed) == sorted(
        (commits[n], "insert", f"k{n}_{i}") for n in range(3, 11) for i in range(3))
    assert t.changes("0").num_rows == 108


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_forty_commits_time_travel_to_an_archived_commit_then_cleaned(tmp_path, table_type):
    """With cleaning off, time travel to an archived commit returns its full rows (schema from the archived
    metadata); once cleaning removed that state's files, the same query raises CleanedInstantsError."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", table_type=table_type, buckets=1,
                         options={"hoodie.clean.automatic": "false", "compaction.delta_commits": 3})
    commits = [t.write(_rows(["a", "b", f"n{n}"], "x", n)) for n in range(40)]
    fourth = commits[3]
    assert _archived(t, fourth)
    got = t.to_arrow(as_of=fourth)
    assert got.schema.names[5:] == SCHEMA.names
    assert sorted((r["id"], r["v"]) for r in got.to_pylist()) == [("a", 3), ("b", 3), ("n0", 0), ("n1", 1),
                                                                   ("n2", 2), ("n3", 3)]
    for commit in commits[:8:3]:  # hudi-rs agrees on time travel to archived commits
        assert rows(t.to_arrow(as_of=commit), SCHEMA.names) == rows(hudi_rs(t.path, as_of=commit), SCHEMA.names)
    assert t.clean(retain_commits=2)
    with pytest.raises(CleanedInstantsError, match="clean.retain_commits"):
        t.to_arrow(as_of=fourth)
    with pytest.raises(CleanedInstantsError, match="clean.retain_commits"):
        t.changes(commits[2], commits[5])
    latest = t.incremental(commits[2])  # the latest image needs only the latest file versions
    assert sorted(latest["id"].to_pylist()) == sorted(["a", "b"] + [f"n{n}" for n in range(3, 40)])


def _model_feed(states: list[dict], commits: list[str], lo: int, hi: int) -> list[tuple]:
    """The change rows of commits lo..hi (indexes) from the per-commit states."""
    out = []
    for n in range(lo, hi + 1):
        before, after = states[n - 1] if n else {}, states[n]
        for k in set(before) | set(after):
            if k not in before:
                out.append((commits[n], "insert", k, after[k]))
            elif k not in after:
                out.append((commits[n], "delete", k, before[k]))
            elif before[k] != after[k]:
                out += [(commits[n], "update_preimage", k, before[k]), (commits[n], "update_postimage", k, after[k])]
    return sorted(out)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 100_000))
def test_every_range_equals_the_model_or_is_refused(tmp_path_factory, seed):
    rng = random.Random(seed)
    keep_min = rng.randint(2, 4)
    options = {"hoodie.keep.min.commits": keep_min, "hoodie.keep.max.commits": keep_min + rng.randint(1, 2),
               "hoodie.cleaner.commits.retained": rng.randint(1, keep_min - 1),
               "hoodie.clean.automatic": rng.choice(["true", "false"]),
               "compaction.delta_commits": rng.choice([1, 3, 100])}
    if rng.random() < 0.5:
        options["hoodie.table.cdc.enabled"] = "true"
    t = HudiTable.create(str(tmp_path_factory.mktemp("p") / "t"), table_name="p", record_key="id",
                         ordering_field="ts", partition_by="dt", buckets=2,
                         table_type=(table_type := rng.choice(["MERGE_ON_READ", "COPY_ON_WRITE"])), options=options)
    states: list[dict] = []
    commits: list[str] = []
    state: dict = {}
    for step in range(rng.randint(6, 12)):
        keys = sorted({f"k{rng.randrange(8)}" for _ in range(rng.randint(1, 4))})
        dt = {k: str(int(k[1:]) % 2) for k in keys}
        if rng.random() < 0.25 and state:
            gone = [k for k in keys if k in state] or [next(iter(state))]
            commits.append(t.write(pa.table({"id": gone, "dt": [str(int(k[1:]) % 2) for k in gone]}),
                                   operation="delete"))
            for k in gone:
                state.pop(k, None)
        else:
            commits.append(t.write(pa.Table.from_pylist(
                [{"id": k, "dt": dt[k], "ts": step, "v": step} for k in keys], schema=SCHEMA)))
            state.update({k: step for k in keys})
        states.append(dict(state))
    from hudi_ds.read.changes import commit_changes, require_readable
    from hudi_ds.read.retention import earliest_retained

    retained = earliest_retained(t.snapshot().timeline)
    archived = [c for c in commits if _archived(t, c)]
    answered = 0
    bounds = [("0", -1)] + [(c, n) for n, c in enumerate(commits)]
    for _ in range(6):
        (start, lo), (end, hi) = sorted(rng.sample(bounds, 2), key=lambda b: b[1])
        safe = retained is None or start >= retained  # cleaning kept every file version the range needs
        try:
            inc = {r["id"]: r["v"] for r in t.incremental(start, end).to_pylist()}
            assert inc == {k: v for k, v in states[hi].items() if v > (lo if lo >= 0 else -1) and v <= hi}, (start, end)
            answered += 1
        except CleanedInstantsError:
            assert not safe, (start, end)
        try:
            feed = sorted((r["_commit_time"], r["_change_type"], r["id"], r["v"])
                          for r in t.changes(start, end).to_pylist())
            assert feed == _model_feed(states, commits, lo + 1, hi), (start, end)
            answered += 1
        except CleanedInstantsError:
            assert not safe, (start, end)
    # the planners' check (Spark) refuses a commit's changes exactly when reading them does
    snap, commit = t.snapshot(), rng.choice(commits)
    outcomes = []
    for attempt in (commit_changes, require_readable):
        try:
            attempt(snap, commit)
            outcomes.append(True)
        except CleanedInstantsError:
            outcomes.append(False)
    assert outcomes[0] == outcomes[1], commit
    if options["hoodie.clean.automatic"] == "false":
        assert answered == 12  # nothing cleaned: archived or not, every range is answered
        # merge-on-read archiving keeps the delta commits the next compaction counts (Hudi's archiver)
        waits_for_compaction = table_type == "MERGE_ON_READ" and options["compaction.delta_commits"] > len(commits)
        assert archived or len(commits) <= options["hoodie.keep.max.commits"] or waits_for_compaction
