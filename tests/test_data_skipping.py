"""Data skipping by the metadata table's column_stats and partition_stats (hudi_ds.read.data_skipping): a filter
opens only the files whose statistics allow a match, and every read gives the rows a read without the metadata
table (no skipping) gives, on the tables Apache Hudi wrote and on ours."""

from __future__ import annotations

import datetime
import decimal
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tables import REFERENCE_DIR

from hudi_ds import HudiTable
from hudi_ds.cli.progress import READ, WatchedStorage
from hudi_ds.metadata import records as md
from hudi_ds.read.data_skipping import may_hold
from hudi_ds.read.filters import RowFilter
from hudi_ds.read.skipping import bounds_of

STATS_TABLES = ["cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_overwrite", "cow_v9_timebasedkeygen_epochmillis",
                "quickstart_mor_avro_v8_trips_8i3u1d"]
UNSKIPPED = {"hoodie.metadata.enable": "false"}


def row_set(t: pa.Table) -> list[str]:
    return sorted(map(repr, t.to_pylist()))


def watch(t: HudiTable) -> list[str]:
    """The data files `t`'s later reads open (list filled as they read)."""
    opened: list[str] = []
    t.storage = WatchedStorage(t.storage, lambda kind, rel: opened.append(rel) if kind == READ else None)
    return opened


@pytest.mark.parametrize("name", STATS_TABLES)
def test_filters_on_every_column_give_the_unskipped_rows(name):
    """Every column type Hudi keeps statistics of (strings, longs, dates, micro timestamps, decimals as bytes,
    booleans), each bound tried on both sides of a value the table holds."""
    path = str(REFERENCE_DIR / name)
    plain = HudiTable(path, options=UNSKIPPED).to_arrow()
    skipping = HudiTable(path)
    for field in plain.schema:
        if pa.types.is_floating(field.type) or field.name == "_hoodie_file_name":
            continue
        values = sorted({v for v in plain[field.name].to_pylist() if v is not None})
        for value in {values[0], values[len(values) // 2]}:
            for op in ("=", "<", ">="):
                filters: list[tuple[str, str, Any]] = [(field.name, op, value)]
                expected = plain.filter(pa.compute.field(field.name) == value) if op == "=" else None
                got = skipping.to_arrow(filters=filters)
                assert row_set(got) == row_set(HudiTable(path, options=UNSKIPPED).to_arrow(filters=filters)), \
                    (field.name, op, value)
                if expected is not None:
                    assert got.num_rows == expected.num_rows


@pytest.mark.parametrize(("name", "column", "value"), [("cow_v9_timebasedkeygen_epochmillis", "txn_id", "TXN-003"),
                                                       ("quickstart_mor_avro_v8_trips_8i3u1d", "rider", "rider-A")])
def test_a_filter_matching_one_file_group_opens_only_its_files(name, column, value):
    skipping, plain = HudiTable(str(REFERENCE_DIR / name)), HudiTable(str(REFERENCE_DIR / name), options=UNSKIPPED)
    opened, opened_plain = watch(skipping), watch(plain)
    got = skipping.to_arrow(filters=[(column, "=", value)])
    assert got.num_rows == 1
    assert row_set(got) == row_set(plain.to_arrow(filters=[(column, "=", value)]))
    [file_id] = {got["_hoodie_file_name"][0].as_py().lstrip(".").split("_")[0]}
    assert opened and all(Path(f).name.lstrip(".").startswith(file_id) for f in opened)
    assert len({Path(f).name.lstrip(".").split("_")[0] for f in opened_plain}) > 1  # without stats: every group


def test_every_read_path_skips(tmp_path):
    name, column, value = "cow_v9_timebasedkeygen_epochmillis", "txn_id", "TXN-003"
    t = HudiTable(str(REFERENCE_DIR / name))
    expected = row_set(HudiTable(str(REFERENCE_DIR / name), options=UNSKIPPED).to_arrow(filters=[(column, "=", value)]))
    opened = watch(t)
    batches = list(t.to_batches(filters=[(column, "=", value)]))
    assert row_set(pa.Table.from_batches(batches)) == expected
    by_batches = set(opened)
    opened.clear()
    scanned = t.scan().filter(pl.col(column) == value).collect()
    assert sorted(map(repr, scanned.to_arrow().to_pylist())) == expected
    assert len(by_batches) == len(set(opened)) == 1


def test_time_travel_uses_file_statistics_only():
    """Partition statistics describe the latest files: a read as of an older instant keeps to per-file ones."""
    path = str(REFERENCE_DIR / "cow_v9_txns_simple_meta")
    t = HudiTable(path)
    for inst in [i.requested_time for i in t.timeline() if i.action == "commit"][:4]:
        for value in ("TXN-001", "TXN-007", "TXN-016"):
            got = t.to_arrow(as_of=inst, filters=[("txn_id", ">=", value)])
            plain = HudiTable(path, options=UNSKIPPED).to_arrow(as_of=inst, filters=[("txn_id", ">=", value)])
            assert row_set(got) == row_set(plain), (inst, value)


# ---- soundness over random data: statistics of any values never skip a file holding a match ------------------

COLUMN_TYPES = {"i": pa.int64(), "s": pa.string(), "d": pa.date32(), "t": pa.timestamp("us", tz="UTC"),
                "m": pa.decimal128(10, 2), "b": pa.bool_()}
VALUES = {
    "i": st.integers(min_value=-50, max_value=50),
    "s": st.text(alphabet="abcAB\u00e9\ud7ff\ue000\U0001f600", max_size=3),
    "d": st.dates(min_value=datetime.date(1969, 12, 1), max_value=datetime.date(1970, 3, 1)),
    "t": st.datetimes(min_value=datetime.datetime(1969, 12, 31), max_value=datetime.datetime(1970, 1, 2),
                      timezones=st.just(datetime.timezone.utc)),
    "m": st.decimals(min_value=-100, max_value=100, places=2),
    "b": st.booleans(),
}
WRAPPERS = {"i": "LongWrapper", "s": "StringWrapper", "d": "IntWrapper", "t": "LongWrapper", "m": "BytesWrapper",
            "b": "BooleanWrapper"}


def hudi_bound(column: str, value: Any) -> md.WrappedValue:
    """`value` wrapped as Apache Hudi writes it: dates as days, timestamps as microseconds, decimals as the
    unscaled two's-complement bytes."""
    if column == "d":
        value = (value - datetime.date(1970, 1, 1)).days
    elif column == "t":
        value = (value - datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)) // datetime.timedelta(
            microseconds=1)
    elif column == "m":
        unscaled = int(value.scaleb(2))
        value = unscaled.to_bytes(8, "big", signed=True)
    return md.WrappedValue(WRAPPERS[column], value)


def file_stats(column: str, values: list[Any]) -> md.ColumnStats:
    present = [v for v in values if v is not None]
    low, high = (min(present), max(present)) if present else (None, None)
    return md.ColumnStats(
        "f.parquet", column, None if low is None else hudi_bound(column, low),
        None if high is None else hudi_bound(column, high), len(values), len(values) - len(present), 1, 1,
        False, False, None)


@st.composite
def file_and_filter(draw: st.DrawFn) -> tuple[str, list[Any], str, Any]:
    column = draw(st.sampled_from(sorted(COLUMN_TYPES)))
    values = draw(st.lists(st.one_of(st.none(), VALUES[column]), max_size=6))
    op = draw(st.sampled_from(["=", "!=", "<", "<=", ">", ">=", "in", "not in"]))
    value = draw(st.lists(VALUES[column], min_size=1, max_size=3)) if op in ("in", "not in") \
        else draw(VALUES[column])
    return column, values, op, value


@settings(max_examples=400, deadline=None)
@given(file_and_filter())
def test_statistics_skip_only_files_without_a_match(case):
    column, values, op, value = case
    schema = pa.schema([(c, t) for c, t in COLUMN_TYPES.items()])
    data = pa.table({c: pa.array(values if c == column else [None] * len(values), COLUMN_TYPES[c])
                     for c in COLUMN_TYPES})
    filters = [(column, op, value)]
    matches = RowFilter(tuple(filters)).apply(data).num_rows
    if not may_hold({column: file_stats(column, values)}, bounds_of(filters, schema), schema):
        assert matches == 0, (values, op, value)


@pytest.mark.parametrize("column", sorted(COLUMN_TYPES))
def test_statistics_of_each_type_skip_a_value_outside_their_range(column):
    schema = pa.schema([(c, t) for c, t in COLUMN_TYPES.items()])
    low, high = {"i": (1, 5), "s": ("b", "c"), "d": (datetime.date(1970, 1, 2), datetime.date(1970, 1, 5)),
                 "t": (datetime.datetime(1970, 1, 1, 1, tzinfo=datetime.timezone.utc),
                       datetime.datetime(1970, 1, 1, 2, tzinfo=datetime.timezone.utc)),
                 "m": (decimal.Decimal("1.25"), decimal.Decimal("2.50")), "b": (True, True)}[column]
    outside = {"i": 9, "s": "d", "d": datetime.date(1970, 1, 9),
               "t": datetime.datetime(1970, 1, 1, 3, tzinfo=datetime.timezone.utc), "m": decimal.Decimal("2.51"),
               "b": False}[column]
    stats = {column: file_stats(column, [low, high])}
    assert not may_hold(stats, bounds_of([(column, "=", outside)], schema), schema)
    assert may_hold(stats, bounds_of([(column, "=", high)], schema), schema)
    assert may_hold(stats, bounds_of([(column, "not in", [outside])], schema), schema)
