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
    """Apply the feed commit by commit, checking that every before-image is the state it replaces."""
    state: dict = {}
    rows = changes.to_pylist()
    for commit in sorted({r["_commit_time"] for r in rows}):
        mine = [r for r in rows if r["_commit_time"] == commit]
        before = dict(state)
        for r in mine:
            ident, value = (r["_hoodie_partition_path"], r["_hoodie_record_key"]), (r["ts"], r["v"])
            kind = r["_change_type"]
            if kind in ("update_preimage", "delete"):
                assert before[ident] == value, (commit, kind, ident)
            if kind == "insert":
                assert ident not in before, (commit, ident)
                state[ident] = value
            elif kind == "update_postimage":
                assert ident in before, (commit, ident)
                state[ident] = value
            elif kind == "delete":
                del state[ident]
        pres = sorted(r["_hoodie_record_key"] for r in mine if r["_change_type"] == "update_preimage")
        posts = sorted(r["_hoodie_record_key"] for r in mine if r["_change_type"] == "update_postimage")
        assert pres == posts, commit
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


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]))
def test_replayed_feed_reproduces_the_table(tmp_path_factory, seed, table_type):
    rng = random.Random(seed)
    path = tmp_path_factory.mktemp("feed") / "t"
    t = HudiTable.create(str(path), table_name="f", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, buckets=2,
                         options={"compaction.delta_commits": rng.choice([1, 2, 3, 100])})  # compactions between
    commits = []
    for step in range(rng.randint(1, 6)):
        rows = [{"id": f"k{rng.randrange(12)}", "dt": rng.choice("xy"), "ts": rng.randrange(5), "v": step}
                for _ in range(rng.randint(1, 10))]
        op = rng.choice(["upsert", "upsert", "delete", "insert_overwrite"])
        commits.append(t.write(pa.Table.from_pylist(rows, schema=SCHEMA), operation=op))
    assert replay(t.changes("0")) == snapshot_state(t)
    for c in commits:  # the feed up to each commit reproduces the table as of it
        as_of = {(r["_hoodie_partition_path"], r["_hoodie_record_key"]): (r["ts"], r["v"])
                 for r in t.to_arrow(as_of=c).to_pylist()}
        assert replay(t.changes("0", c)) == as_of, c


def test_changes_of_an_archived_commit_are_read_from_the_archive(tmp_path):
    """A streaming split planned before the writer archived its commit still reads it: from the archived metadata."""
    from hudi_ds.read.changes import commit_changes

    t = HudiTable.create(str(tmp_path / "c"), table_name="c", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=1, options={"archive.min_commits": 2, "archive.max_commits": 3,
                                                            "clean.retain_commits": 1, "hoodie.clean.automatic": False})
    first = t.write(pa.Table.from_pylist([{"id": "a", "dt": "x", "ts": 0, "v": 0}], schema=SCHEMA))
    planned = t.snapshot()
    before = commit_changes(planned, first)
    assert before.num_rows == 1
    for n in range(1, 6):
        t.write(pa.Table.from_pylist([{"id": "a", "dt": "x", "ts": n, "v": n}], schema=SCHEMA))
    assert t.snapshot().timeline.find(first) is None  # archived
    assert commit_changes(t.snapshot(), first).to_pylist() == before.to_pylist()


def test_changes_of_a_cleaned_commit_name_the_retention_option(tmp_path):
    """Cleaning removes the file versions a commit's changes are read from: asking for them is an error, not
    wrong rows; commits cleaning kept still read."""
    from hudi_ds import CleanedInstantsError
    from hudi_ds.read.changes import earliest_retained

    t = HudiTable.create(str(tmp_path / "c"), table_name="c", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=1, table_type="COPY_ON_WRITE",
                         options={"clean.retain_commits": 2})
    commits = [t.write(pa.Table.from_pylist([{"id": "a", "dt": "x", "ts": n, "v": n}], schema=SCHEMA))
               for n in range(6)]
    retained = earliest_retained(t.snapshot().timeline)
    assert retained is not None and retained > commits[0]
    with pytest.raises(CleanedInstantsError, match="clean.retain_commits"):
        t.changes("0")
    kept = [c for c in commits if c >= retained]
    feed = t.changes(kept[0])
    assert sorted({r["_commit_time"] for r in feed.to_pylist()}) == kept[1:]


@pytest.mark.parametrize("extra", [pa.int32(), pa.float32(), pa.bool_(), pa.string(), pa.timestamp("us", "UTC"),
                                   pa.decimal128(10, 2), pa.date32()])
@pytest.mark.parametrize("key", [pa.int64(), pa.string()])
def test_inferred_pre_images_of_every_column_type(tmp_path, extra, key):
    """The pre-images of a merge-on-read update come from the base rows of the keys it wrote (found by the key
    column, then the other columns filtered): every column type comes back as written, with either kind of key."""
    import datetime
    import decimal

    samples = {pa.int32(): [7, 8], pa.float32(): [1.5, 2.5], pa.bool_(): [True, False], pa.string(): ["p", "q"],
               pa.timestamp("us", "UTC"): [datetime.datetime(2024, 1, 1, tzinfo=datetime.timezone.utc),
                                           datetime.datetime(2025, 6, 1, tzinfo=datetime.timezone.utc)],
               pa.decimal128(10, 2): [decimal.Decimal("1.25"), decimal.Decimal("9.75")],
               pa.date32(): [datetime.date(2024, 1, 1), datetime.date(2025, 6, 1)]}
    old, new = samples[extra]
    schema = pa.schema([("id", key), ("dt", pa.string()), ("ts", pa.int64()), ("x", extra)])
    ids = [i if key == pa.int64() else f"k{i}" for i in range(40)]
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=2)
    t.write(pa.table({"id": ids, "dt": ["a"] * 40, "ts": [1] * 40, "x": [old] * 40}, schema=schema),
            operation="bulk_insert")
    c2 = t.write(pa.table({"id": ids[3:6], "dt": ["a"] * 3, "ts": [2] * 3, "x": [new] * 3}, schema=schema))
    feed = t.changes(t.timeline()[0].requested_time, c2)
    got = sorted((r["_change_type"], r["id"], r["ts"], r["x"]) for r in feed.to_pylist())
    assert got == sorted([(kind, i, ts, x) for i in ids[3:6]
                          for kind, ts, x in (("update_preimage", 1, old), ("update_postimage", 2, new))])
    assert feed.schema.field("x").type == extra


def test_groups_compared_together_give_the_rows_of_comparing_them_one_by_one():
    """The slices a commit only logged into are compared all at once; the rows (kinds, images, order) of each
    must be those of comparing its states alone: updates, inserts, a delete, a row that reappeared, a key two
    groups share, a row without a commit time."""
    from hudi_ds.read.changes import _compare_written, _written_states, compare_states, feed_schema

    def state(rows: list[tuple[str | None, int, str]]) -> pa.Table:
        return pa.table({"_hoodie_commit_time": [c for c, _, _ in rows],
                         "_hoodie_record_key": [str(k) for _, k, _ in rows],
                         "_hoodie_partition_path": ["p"] * len(rows), "id": [k for _, k, _ in rows],
                         "v": [v for _, _, v in rows]}, schema=schema)

    schema = pa.schema([("_hoodie_commit_time", pa.string()), ("_hoodie_record_key", pa.string()),
                        ("_hoodie_partition_path", pa.string()), ("id", pa.int64()), ("v", pa.string())])

    c = "002"
    groups = [
        (state([("001", 1, "a"), ("001", 2, "b"), ("001", 3, "c")]),
         state([("001", 2, "b"), (c, 1, "a2"), (c, 4, "d")])),
        (state([("001", 10, "x"), ("001", 11, "y")]),
         state([(c, 10, "x2"), ("001", 11, "y"), (c, 12, "z"), ("000", 13, "old")])),
        (state([]), state([(c, 20, "n")])),
        (state([("001", 1, "other"), ("001", 20, "p")]), state([(c, 1, "other2"), (None, 20, "p")])),
    ]
    out = feed_schema(pa.schema([("id", pa.int64()), ("v", pa.string())]))
    one_by_one = [compare_states(b, a, c, out, "id") for b, a in groups]
    written = [pa.concat_arrays([b["id"].combine_chunks(), a["id"].combine_chunks()]) for b, a in groups]
    together = _compare_written([_written_states(b, a, w, "id") for (b, a), w in zip(groups, written, strict=True)],
                                c, out)
    assert len(together) == len(groups)
    for mine, alone in zip(together, one_by_one, strict=True):
        assert mine.equals(alone)
    rows = pa.concat_tables(together)
    kinds = sorted(zip(rows["_change_type"].to_pylist(), rows["id"].to_pylist(), strict=True))
    assert kinds == [("delete", 3), ("insert", 4), ("insert", 12), ("insert", 13), ("insert", 20),
                     ("update_postimage", 1), ("update_postimage", 1), ("update_postimage", 10),
                     ("update_preimage", 1), ("update_preimage", 1), ("update_preimage", 10)]
