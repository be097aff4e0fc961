"""A Debezium-shaped changelog of a source database (inserts, updates whose unchanged large columns arrive as
`__debezium_unavailable_value`, deletes, keys re-inserted after a delete), cut into random batches with the events
of each batch out of order, applied as it arrives: the table equals the source database's final state. The
table: version 9, ordering by the log sequence number, IGNORE_MARKERS with Debezium's marker, Debezium's `op`
column as changelog input (hoodie.datasource.write.changelog.column)."""

from __future__ import annotations

import random
import tempfile

import pyarrow as pa
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import HudiTable

UNAVAILABLE = "__debezium_unavailable_value"
SCHEMA = pa.schema([("id", pa.int64()), ("lsn", pa.int64()), ("op", pa.string()), ("qty", pa.int64()),
                    ("doc", pa.string())])
OPTIONS = {"hoodie.write.table.version": "9", "hoodie.table.partial.update.mode": "IGNORE_MARKERS",
           "hoodie.write.partial.update.custom.marker": UNAVAILABLE,
           "hoodie.datasource.write.changelog.column": "op", "compaction.delta_commits": "3"}

# one source event: (key, kind, qty, whether a large `doc` is rewritten or arrives unavailable, doc text)
event = st.tuples(st.integers(0, 5), st.sampled_from(["write", "write", "delete"]), st.integers(0, 99),
                  st.booleans(), st.text("abc", max_size=3))


def changelog(events: list[tuple]) -> tuple[list[dict], dict[int, dict]]:
    """Debezium's events for a source history, and the source's final rows."""
    source: dict[int, dict] = {}
    out = []
    for lsn, (key, kind, qty, doc_changed, doc) in enumerate(events, start=1):
        if kind == "delete":
            if key in source:
                del source[key]
                out.append({"id": key, "lsn": lsn, "op": "d", "qty": None, "doc": None})
        elif key not in source:
            source[key] = {"qty": qty, "doc": doc}
            out.append({"id": key, "lsn": lsn, "op": "c", "qty": qty, "doc": doc})
        else:  # an update: Debezium leaves an unchanged TOASTed column out
            source[key] = {"qty": qty, "doc": doc if doc_changed else source[key]["doc"]}
            out.append({"id": key, "lsn": lsn, "op": "u", "qty": qty, "doc": doc if doc_changed else UNAVAILABLE})
    return out, source


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(events=st.lists(event, min_size=1, max_size=40), cuts=st.lists(st.integers(1, 40), max_size=6),
       table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), seed=st.integers(0, 2**16))
def test_a_debezium_changelog_in_any_batching_equals_the_source(events, cuts, table_type, seed):
    feed, source = changelog(events)
    bounds = sorted({0, len(feed), *(c for c in cuts if c < len(feed))})
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        t = HudiTable.create(tmp + "/t", table_name="orders", record_key="id", ordering_field="lsn",
                             table_type=table_type, buckets=2, options=OPTIONS)
        for lo, hi in zip(bounds, bounds[1:], strict=False):
            batch = feed[lo:hi]
            rng.shuffle(batch)  # events of one batch arrive in any order
            t.write(pa.Table.from_pylist(batch, schema=SCHEMA))
        expected = sorted((k, v["qty"], v["doc"]) for k, v in source.items())
        assert rows(t.to_arrow(), ["id", "qty", "doc"]) == expected
        if table_type == "MERGE_ON_READ":
            t.compact()
            assert rows(t.to_arrow(), ["id", "qty", "doc"]) == expected
        assert rows(hudi_rs(t.path), ["id", "qty", "doc"]) == expected  # whole rows once compacted
