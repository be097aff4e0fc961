"""Property: any sequence of upsert and delete batches reads back as the dict model of the table's merge mode, in
our reader and in hudi-rs, for MERGE_ON_READ and COPY_ON_WRITE tables."""

from __future__ import annotations

import tempfile
from unittest import mock

import numpy as np
import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import DictModel
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.index.bucket import bucket_for_hash_values
from hudi_ds.merge import LogDeletes, LogVersions, merge_slice, merge_slice_counted, slice_merge
from hudi_ds.write import task

SCHEMA = pa.schema([("key", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("val", pa.int64())])
# an integer key: merging matches records by the key column's integers rather than the key strings
INT_KEYS = {f"k{i}": i - 4 for i in range(12)} | {"ü€": 10**15, "x:y": -(2**63), "a,b": 0}
COLS = ["key", "part", "ts", "val"]

def compactions(t: HudiTable) -> int:
    """Completed compactions (a `commit` on a MERGE_ON_READ table)."""
    return sum(i.action == "commit" for i in t.timeline()) if t.config.is_mor else 0


row = st.fixed_dictionaries({
    "key": st.sampled_from([f"k{i}" for i in range(12)] + ["ü€", "x:y", "a,b"]),
    "part": st.sampled_from(["p1", "p2", "p3"]),
    "ts": st.integers(min_value=0, max_value=6),
    "val": st.integers(min_value=-1000, max_value=1000),
})
batch = st.tuples(st.sampled_from(["upsert", "upsert", "delete", "insert"]), st.lists(row, min_size=1, max_size=25))


# how a table is told its merge mode: (options, whether the ordering field decides, whether ties keep the first)
MERGE_MODES = {
    "event time": ({}, True, False),
    "commit time": ({"hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}, False, False),
    "commit-time payload": ({"hoodie.datasource.write.payload.class": "OverwriteWithLatestAvroPayload"}, False, False),
    "event-time payload": ({"hoodie.datasource.write.payload.class": "EventTimeAvroPayload"}, True, False),
    "first value": ({"hoodie.datasource.write.payload.class": "FirstValueAvroPayload"}, True, True),
}


def folded_changes(changes: pa.Table, columns: list[str]) -> list[tuple]:
    """The table the change feed describes: each record's last change in commit order (a delete removes it)."""
    latest: dict[tuple, dict] = {}
    for r in changes.sort_by([("_commit_time", "ascending")]).to_pylist():
        if r["_change_type"] != "update_preimage":
            latest[(r["part"], r["key"])] = r
    return sorted((tuple(r[c] for c in columns) for r in latest.values() if r["_change_type"] != "delete"), key=repr)


# the kinds of table: (table type, options)
TABLE_KINDS = {
    "merge-on-read": ("MERGE_ON_READ", {}),
    "copy-on-write": ("COPY_ON_WRITE", {}),
    "copy-on-write, virtual keys": ("COPY_ON_WRITE", {"hoodie.populate.meta.fields": "false"}),
}


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(kind=st.sampled_from(sorted(TABLE_KINDS)),
       buckets=st.integers(min_value=1, max_value=4),
       batches=st.lists(batch, min_size=1, max_size=6),
       parallel_route=st.booleans(),
       int_keys=st.booleans(),
       version=st.sampled_from([6, 8, 9]),
       mode=st.sampled_from(sorted(MERGE_MODES)))
def test_any_upsert_delete_sequence_matches_dict_model(kind, buckets, batches, parallel_route, int_keys,
                                                       version, mode):
    """Under each merge mode: snapshot, incremental and change-feed reads of any history equal the model, before
    and after the compactions the writes run; hudi-rs agrees where it merges by the mode (it always merges log
    versions by the ordering field: event time, or copy-on-write tables, whose base files hold merged rows).
    Copy-on-write tables with virtual keys (no meta fields in their files) too."""
    # parallel_route: every batch is routed in parts on the writer threads, as big inputs are
    threshold = 2 if parallel_route else task._PARALLEL_ROUTE_ROWS
    table_type, table_options = TABLE_KINDS[kind]
    options, event_time, first_value = MERGE_MODES[mode]
    with tempfile.TemporaryDirectory() as tmp, mock.patch.object(task, "_PARALLEL_ROUTE_ROWS", threshold):
        t = HudiTable.create(tmp + "/t", table_name="prop", record_key="key", ordering_field="ts",
                             partition_by="part", table_type=table_type, buckets=buckets,
                             options={"compaction.delta_commits": 3,  # compactions run between writes too
                                      "hoodie.write.table.version": str(version), **options, **table_options})
        assert t.config.merge_mode == ("CUSTOM" if first_value else "EVENT_TIME_ORDERING" if event_time
                                       else "COMMIT_TIME_ORDERING")
        assert t.config.first_value == first_value
        model = DictModel("key", "ts" if event_time else None, "part", merge_on_read=table_type == "MERGE_ON_READ",
                          bucket_of=lambda key: bucket_for_hash_values([str(key[0])], buckets),
                          first_value=first_value)
        schema = SCHEMA.set(0, pa.field("key", pa.int64())) if int_keys else SCHEMA
        for op, data in batches:
            if int_keys:
                data = [{**r, "key": INT_KEYS[r["key"]]} for r in data]
            before = compactions(t)
            t.write(pa.Table.from_pylist(data, schema=schema), operation=op)
            if op == "delete":
                model.delete(data)
            else:
                model.upsert(data)
            if compactions(t) > before:
                model.compact()  # the write's table services compacted after its commit
        expected = model.sorted_rows(COLS)
        assert rows(t.to_arrow(), COLS) == expected
        assert rows(t.incremental("earliest"), COLS) == expected
        assert folded_changes(t.changes("earliest"), COLS) == expected
        if (event_time and not first_value) or table_type == "COPY_ON_WRITE":
            assert rows(hudi_rs(t.path), COLS) == expected
        else:  # commit time, first value: hudi-rs reads the same once a compaction folded every log
            t.compact()
            assert rows(t.to_arrow(), COLS) == expected
            assert rows(hudi_rs(t.path), COLS) == expected
        # a read naming its columns decodes only those (plus what merging needs), with the same result
        named = t.to_arrow(columns=["val", "key"], filters=[("ts", ">=", 3)])
        assert named.column_names == ["val", "key"]
        assert rows(named, ["key", "val"]) == sorted(((k, v) for k, _, ts, v in expected if ts >= 3), key=repr)


log_entry = st.tuples(st.integers(min_value=0, max_value=15), st.booleans(), st.integers(min_value=0, max_value=4))


@settings(max_examples=200, deadline=None)
@given(base_keys=st.sets(st.integers(min_value=0, max_value=15), max_size=12),
       entries=st.lists(log_entry, max_size=20), ordered=st.booleans(), as_strings=st.booleans())
def test_merge_counts_are_what_happened_to_the_base_rows(base_keys, entries, ordered, as_strings):
    """A compaction's write stats come from the merge's counts: base rows met by a log version, base rows
    deleted (gone from the output), distinct log keys."""
    key_type = pa.string() if as_strings else pa.int64()
    keyed = (lambda ks: [str(k) for k in ks]) if as_strings else list
    schema = pa.schema([("id", key_type), ("ts", pa.int64())])
    base = pa.table({"id": pa.array(keyed(sorted(base_keys)), key_type), "ts": [2] * len(base_keys)})
    upserts = [(k, ts) for k, is_delete, ts in entries if not is_delete]
    removed = [(k, ts) for k, is_delete, ts in entries if is_delete]
    data = LogVersions(pa.table({"id": pa.array(keyed([k for k, _ in upserts]), key_type),
                                 "ts": [ts for _, ts in upserts]}),
                       np.zeros(len(upserts), np.int64), np.arange(len(upserts), dtype=np.int64))
    deletes = LogDeletes(pa.array(keyed([k for k, _ in removed]), key_type),
                         pa.array([ts for _, ts in removed], pa.int64()), np.array([ts == 0 for _, ts in removed]),
                         np.zeros(len(removed), np.int64),
                         np.arange(len(upserts), len(entries), dtype=np.int64))
    merged, counts = merge_slice_counted(base, data if upserts else None, deletes if removed else None,
                                         "ts" if ordered else None, schema, key_field="id")
    log_keys = {k for k, _, _ in entries}
    out = set(merged["id"].to_pylist())
    assert counts.log_keys == (len(log_keys) if entries else 0)
    assert counts.base_rows_met == (len(base_keys & log_keys) if entries else 0)
    assert counts.base_rows_deleted == len(set(keyed(base_keys)) - out)


@settings(max_examples=300, deadline=None)
@given(base_keys=st.sets(st.integers(min_value=-50, max_value=50), max_size=30),
       winner_keys=st.sets(st.integers(min_value=-60, max_value=60), min_size=1, max_size=30),
       layout=st.sampled_from(["sorted", "shuffled", "wide"]), data=st.data())
def test_met_finds_each_base_row_a_log_version_meets(base_keys, winner_keys, layout, data):
    """Whatever the way the base rows are looked up (a binary search of a base sorted by key, a byte table, a
    hash), every base row whose key has a log version is found once, in base order, with that version."""
    if layout == "wide":  # keys too far apart for the byte table
        base_keys, winner_keys = {k << 40 for k in base_keys}, {k << 40 for k in winner_keys}
    keys = sorted(base_keys) if layout == "sorted" else data.draw(st.permutations(sorted(base_keys)))
    winners = data.draw(st.permutations(sorted(winner_keys)))
    met, version = slice_merge._met(pa.chunked_array([pa.array(keys, pa.int64())]), pa.array(winners, pa.int64()))
    expected = [(row, winners.index(k)) for row, k in enumerate(keys) if k in winner_keys]
    assert list(zip(met.tolist(), version.tolist(), strict=True)) == expected


# a log version: key, kind (data, event-time delete, natural delete), ordering value, commit rank
log_version = st.tuples(st.integers(min_value=0, max_value=6), st.sampled_from(["data", "delete", "natural"]),
                        st.integers(min_value=1, max_value=3), st.integers(min_value=0, max_value=2))


@settings(max_examples=300, deadline=None)
@given(base=st.dictionaries(st.integers(min_value=0, max_value=6), st.integers(min_value=1, max_value=3)),
       versions=st.lists(log_version, max_size=25), ordered=st.booleans(), as_strings=st.booleans())
def test_log_versions_fold_in_log_order_then_meet_the_base(base, versions, ordered, as_strings):
    """The merge rule against a fold written out step by step: versions in log order (commit rank, then
    position), a data version or event-time delete replacing the current one unless that has a strictly
    higher ordering value, a natural delete always; then the folded version meets the base row."""
    key_type = pa.string() if as_strings else pa.int64()
    typed = (lambda ks: pa.array([str(k) for k in ks], key_type)) if as_strings else (lambda ks: pa.array(ks, key_type))
    schema = pa.schema([("id", key_type), ("ts", pa.int64()), ("val", pa.int64())])
    positioned = list(enumerate(versions))  # the position of a version is its place in the list
    upserts = [(p, v) for p, v in positioned if v[1] == "data"]
    removed = [(p, v) for p, v in positioned if v[1] != "data"]
    data = LogVersions(pa.table({"id": typed([v[0] for _, v in upserts]), "ts": [v[2] for _, v in upserts],
                                 "val": [p for p, _ in upserts]}),
                       np.array([v[3] for _, v in upserts], np.int64), np.array([p for p, _ in upserts], np.int64))
    deletes = LogDeletes(typed([v[0] for _, v in removed]),
                         pa.array([0 if v[1] == "natural" else v[2] for _, v in removed], pa.int64()),
                         np.array([v[1] == "natural" for _, v in removed]),
                         np.array([v[3] for _, v in removed], np.int64), np.array([p for p, _ in removed], np.int64))
    base_table = pa.table({"id": typed(sorted(base)), "ts": [base[k] for k in sorted(base)],
                           "val": [-1 - k for k in sorted(base)]})
    merged = merge_slice(base_table, data if upserts else None, deletes if removed else None,
                         "ts" if ordered else None, schema, key_field="id")

    folded: dict[int, tuple[str, float, int]] = {}  # key -> (kind, ordering value, val)
    for p, (key, kind, ts, _) in sorted(positioned, key=lambda pv: (pv[1][3], pv[0])):
        current = folded.get(key)
        value = float("-inf") if kind == "natural" else ts
        if kind == "natural" or current is None or not ordered or not current[1] > value:
            folded[key] = (kind, value, p)
    expected = {k: (ts, -1 - k) for k, ts in base.items()}
    for key, (kind, value, p) in folded.items():
        if kind != "data":
            expected.pop(key, None)
        elif not (ordered and key in base and base[key] > value):
            expected[key] = (int(value), p)
    got = {int(k): (ts, val) for k, ts, val in zip(merged["id"].to_pylist(), merged["ts"].to_pylist(),
                                                   merged["val"].to_pylist(), strict=True)}
    assert got == expected
    assert merged.num_rows == len(got)


MARKER = "__debezium_unavailable_value"
# (table version, options, partial update mode, event time)
PARTIAL_TABLES = {
    "keep values": (9, {"hoodie.table.partial.update.mode": "KEEP_VALUES"}, "KEEP_VALUES", True),
    "keep values, commit time": (9, {"hoodie.table.partial.update.mode": "KEEP_VALUES",
                                     "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}, "KEEP_VALUES", False),
    "ignore defaults": (9, {"hoodie.table.partial.update.mode": "IGNORE_DEFAULTS"}, "IGNORE_DEFAULTS", True),
    "ignore markers, commit time": (9, {"hoodie.table.partial.update.mode": "IGNORE_MARKERS",
                                        "hoodie.write.partial.update.custom.marker": MARKER,
                                        "hoodie.record.merge.mode": "COMMIT_TIME_ORDERING"}, "IGNORE_MARKERS", False),
    "PartialUpdateAvroPayload": (6, {"hoodie.datasource.write.payload.class": "PartialUpdateAvroPayload"},
                                 "IGNORE_DEFAULTS", True),
    "OverwriteNonDefaultsWithLatestAvroPayload": (
        6, {"hoodie.datasource.write.payload.class": "OverwriteNonDefaultsWithLatestAvroPayload"},
        "IGNORE_DEFAULTS", False),
}
PARTIAL_SCHEMA = pa.schema([("key", pa.string()), ("part", pa.string()), ("ts", pa.int64()), ("a", pa.string()),
                            ("b", pa.int64())])
PARTIAL_COLS = ["key", "part", "ts", "a", "b"]
partial_row = st.fixed_dictionaries({
    "key": st.sampled_from([f"k{i}" for i in range(6)]),
    "part": st.sampled_from(["p1", "p2"]),
    "ts": st.integers(min_value=0, max_value=4),
    "a": st.sampled_from(["x", "y", None, MARKER]),
    "b": st.one_of(st.none(), st.integers(min_value=-9, max_value=9)),
})
# an upsert carrying some of the data columns (or a delete), rows of one batch
partial_batch = st.tuples(st.sampled_from(["upsert", "upsert", "upsert", "delete"]),
                          st.sampled_from([("a", "b"), ("a",), ("b",)]), st.lists(partial_row, min_size=1, max_size=12))


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), buckets=st.integers(min_value=1, max_value=2),
       batches=st.lists(partial_batch, min_size=1, max_size=6), kind=st.sampled_from(sorted(PARTIAL_TABLES)))
def test_any_partial_update_sequence_matches_dict_model(table_type, buckets, batches, kind):
    """Upserts carrying some columns, nulls and markers, and deletes, in any batching: snapshot, incremental and
    change-feed reads equal the model of the table's partial update and merge modes, before and after the
    compactions the writes run; hudi-rs agrees on copy-on-write tables (their base files hold whole rows)."""
    version, options, mode, event_time = PARTIAL_TABLES[kind]
    with tempfile.TemporaryDirectory() as tmp:
        t = HudiTable.create(tmp + "/t", table_name="prop", record_key="key", ordering_field="ts",
                             partition_by="part", table_type=table_type, buckets=buckets,
                             options={"compaction.delta_commits": 3, "hoodie.write.table.version": str(version),
                                      **options})
        assert t.config.partial_update_mode == mode
        model = DictModel("key", "ts" if event_time else None, "part", merge_on_read=table_type == "MERGE_ON_READ",
                          bucket_of=lambda key: bucket_for_hash_values([str(key[0])], buckets), partial=mode,
                          marker=MARKER)
        first = [("upsert", ("a", "b"), [{"key": "k0", "part": "p1", "ts": 0, "a": "x", "b": 0}])]
        for op, carried, data in first + batches:
            columns = ["key", "part", "ts", *carried] if mode == "KEEP_VALUES" else PARTIAL_COLS
            before = compactions(t)
            t.write(pa.Table.from_pylist([{c: r[c] for c in columns} for r in data],
                                         schema=pa.schema([PARTIAL_SCHEMA.field(c) for c in columns])), operation=op)
            if op == "delete":
                model.delete(data)
            else:
                model.upsert([{c: r[c] for c in columns} for r in data], columns)
            if compactions(t) > before:
                model.compact()
        expected = model.sorted_rows(PARTIAL_COLS)
        assert rows(t.to_arrow(), PARTIAL_COLS) == expected
        assert rows(t.incremental("earliest"), PARTIAL_COLS) == expected
        assert folded_changes(t.changes("earliest"), PARTIAL_COLS) == expected
        if table_type == "COPY_ON_WRITE":
            assert rows(hudi_rs(t.path), PARTIAL_COLS) == expected
        else:  # the same history read after a compaction of every file group, whole rows in hudi-rs too
            t.compact()
            model.compact()
            assert rows(t.to_arrow(), PARTIAL_COLS) == expected == model.sorted_rows(PARTIAL_COLS)
            assert rows(hudi_rs(t.path), PARTIAL_COLS) == expected
