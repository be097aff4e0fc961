"""Data skipping by the metadata table's column_stats and partition_stats (hudi_ds.read.data_skipping): a filter
opens only the files whose statistics allow a match, and every read gives the rows a read without the metadata
table (no skipping) gives, on the tables Apache Hudi wrote and on ours."""

from __future__ import annotations

import datetime
import decimal
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
import xxhash
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import REFERENCE_DIR, hudi_rs

from hudi_ds import HudiTable, cli
from hudi_ds.cli.progress import READ, WatchedStorage
from hudi_ds.metadata import index_keys
from hudi_ds.metadata import records as md
from hudi_ds.metadata.column_stats import file_group_slices
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import data_files, merged_records
from hudi_ds.read.data_skipping import bound_value, may_hold
from hudi_ds.read.filters import RowFilter
from hudi_ds.read.skipping import bounds_of
from hudi_ds.services.compaction import compact
from hudi_ds.storage import open_storage
from hudi_ds.timeline.timeline import Timeline

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


# ---- our tables: column_stats written by every commit, compaction, clean and rollback -------------------------

STATS_OPTIONS = {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
                 "hoodie.metadata.index.column.stats.enable": "true", "hoodie.index.type": "SIMPLE",
                 "hoodie.parquet.small.file.limit": "0", "hoodie.metadata.compact.max.delta.commits": "3"}


def batch(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": ids, "part": ["p"] * len(ids), "ts": [ts] * len(ids),
                     "day": [datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 40) for i in ids],
                     "amount": pa.array([decimal.Decimal(i) / 4 for i in ids], pa.decimal128(12, 2)),
                     "at": pa.array([i * 1_000_000 for i in ids], pa.timestamp("us", tz="UTC")),
                     "name": [f"n{i:05d}" for i in ids], "score": [i / 3 for i in ids]})


def sorted_table(path: Path, table_type: str, version: int = 9, files: int = 6) -> HudiTable:
    """`files` bulk inserts of ascending, disjoint id ranges: one base file each."""
    t = HudiTable.create(str(path), table_name="s", record_key="id", ordering_field="ts", partition_by="part",
                         table_type=table_type, options={**STATS_OPTIONS, "hoodie.write.table.version": str(version)})
    for k in range(files):
        t.write(batch(list(range(k * 100, k * 100 + 100)), 1), operation="bulk_insert")
    return HudiTable(str(path))


@pytest.mark.parametrize(("table_type", "version"), [("COPY_ON_WRITE", 9), ("MERGE_ON_READ", 9),
                                                     ("COPY_ON_WRITE", 8)])
def test_our_column_stats_skip_files_and_hudi_rs_reads_the_same(tmp_path, table_type, version):
    t = sorted_table(tmp_path / "t", table_type, version)
    plain = HudiTable(str(tmp_path / "t"), options=UNSKIPPED)
    opened = watch(t)
    for column, value in [("id", 250), ("name", "n00420"), ("day", datetime.date(2024, 1, 3)),
                          ("amount", decimal.Decimal("37.5")), ("at", datetime.datetime(1970, 1, 1, 0, 8, 20,
                                                                                         tzinfo=datetime.timezone.utc))]:
        opened.clear()
        got = t.to_arrow(filters=[(column, "=", value)])
        assert row_set(got) == row_set(plain.to_arrow(filters=[(column, "=", value)])) != []
        groups = {Path(f).name.split("_")[0] for f in opened}
        assert len(groups) == len(set(got["_hoodie_file_name"].to_pylist())), column
    opened.clear()
    assert t.to_arrow(filters=[("id", ">=", 10_000)]).num_rows == 0
    assert opened == []
    rs = hudi_rs(str(tmp_path / "t"))
    assert sorted(rs["id"].to_pylist()) == sorted(t.to_arrow()["id"].to_pylist()) == list(range(600))


def test_the_statistics_are_the_files_own(tmp_path):
    """Each base file's column_stats entries hold its columns' min, max, null and value counts."""
    t = sorted_table(tmp_path / "t", "COPY_ON_WRITE", files=3)
    t.write(pa.table({"id": [5, 150], "part": ["p", "p"], "ts": [2, 2], "day": pa.array([None, None], pa.date32()),
                      "amount": pa.array([None, None], pa.decimal128(12, 2)),
                      "at": pa.array([None, None], pa.timestamp("us", tz="UTC")), "name": ["zz", None],
                      "score": [0.5, None]}))
    checked = ["id", "name", "day", "amount", "at", "_hoodie_commit_time"]
    stats = t._read(lambda snap: snap.index_stats(md.COLUMN_STATS, checked))
    assert stats is not None
    on_disk = sorted((tmp_path / "t" / "p").glob("*.parquet"))
    assert len(on_disk) == 5  # the three bulk inserts, and the two files the upsert rewrote
    for file in on_disk:
        name, data = file.name, pq.read_table(file)
        assert set(stats[name]) == set(checked)
        for column in checked:
            s = stats[name][column]
            values = data[column].drop_null()
            assert (s.value_count, s.null_count) == (len(data), data[column].null_count)
            assert bound_value(s.min_value, data.schema.field(column).type) == pa.compute.min(values).as_py()
            assert bound_value(s.max_value, data.schema.field(column).type) == pa.compute.max(values).as_py()


# ---- Hudi's keys ------------------------------------------------------------------------------------------------


@settings(max_examples=300, deadline=None)
@given(st.binary(max_size=100), st.integers(min_value=0, max_value=2**64 - 1))
def test_xxhash64_is_the_reference_implementation(data, seed):
    assert index_keys.xxhash64(data, seed) == xxhash.xxh64_intdigest(data, seed)


@pytest.mark.parametrize("name", STATS_TABLES)
def test_keys_and_file_groups_are_the_ones_hudi_wrote(name):
    """Every column_stats and partition_stats key of a table Hudi wrote, rebuilt from its record's file (or
    partition) and column, sits in the file group Hudi put it in."""
    storage = open_storage(str(REFERENCE_DIR / name))
    mdt, data_timeline = MetadataTable.open(storage), Timeline.load(storage, 2)
    partition_of = {Path(e.path).name: str(Path(e.path).parent) if "/" in e.path else ""
                    for e in data_files(mdt, data_timeline)}
    checked = 0
    for partition in (md.COLUMN_STATS, md.PARTITION_STATS):
        slices = file_group_slices(mdt, partition, mdt.timeline(), data_timeline)
        for index, sl in enumerate(slices):
            for key, record in merged_records(mdt, sl).items():
                s = md.column_stats(record)
                assert s.file_name is not None and s.column_name is not None
                if partition == md.PARTITION_STATS:
                    assert index_keys.partition_stats_key(s.file_name, s.column_name) == key
                elif s.file_name in partition_of:
                    assert index_keys.column_stats_key(partition_of[s.file_name], s.file_name, s.column_name) == key
                assert index_keys.file_group_index(key, len(slices)) == index
                checked += 1
    assert checked > 50


# ---- random histories of our tables ----------------------------------------------------------------------------

history_row = st.fixed_dictionaries({
    "id": st.integers(min_value=0, max_value=60), "ts": st.integers(min_value=0, max_value=3),
    "name": st.one_of(st.none(), st.sampled_from(["ann", "bob", "cy", "\u00e9va", "\U0001f600"])),
    "val": st.one_of(st.none(), st.integers(min_value=-5, max_value=5)),
})
history_step = st.tuples(st.sampled_from(["bulk_insert", "upsert", "upsert", "delete", "compact"]),
                         st.lists(history_row, min_size=1, max_size=15))
random_filter = st.one_of(
    st.tuples(st.just("id"), st.sampled_from(["=", "<", ">=", "!=", "in", "not in"]),
              st.integers(min_value=-1, max_value=61)),
    st.tuples(st.just("name"), st.sampled_from(["=", ">", "<=", "not in"]), st.sampled_from(["ann", "bz", "\u00e9"])),
    st.tuples(st.just("val"), st.sampled_from(["=", "<", ">", "in"]), st.integers(min_value=-6, max_value=6)),
)


@settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))
@given(st.sampled_from(["COPY_ON_WRITE", "MERGE_ON_READ"]), st.lists(history_step, min_size=1, max_size=5),
       st.lists(random_filter, min_size=1, max_size=6))
def test_random_filters_over_random_histories_equal_the_unskipped_read(tmp_path_factory, table_type, steps, filters):
    path = tmp_path_factory.mktemp("h") / "t"
    t = HudiTable.create(str(path), table_name="h", record_key="id", ordering_field="ts", partition_by="part",
                         table_type=table_type, options={**STATS_OPTIONS, "compaction.schedule.enabled": "false",
                                                         "hoodie.clean.commits.retained": "1",
                                                         "hoodie.metadata.index.partition.stats.enable": "true"})
    schema = pa.schema([("id", pa.int64()), ("part", pa.string()), ("ts", pa.int64()), ("name", pa.string()),
                        ("val", pa.int64())])
    for n, (op, rows) in enumerate(steps):
        op = "bulk_insert" if n == 0 else op  # the table's schema comes with its first write
        data = pa.Table.from_pylist([{**r, "part": f"p{r['id'] % 2}"} for r in rows], schema=schema)
        if op == "compact":
            if table_type == "MERGE_ON_READ":
                compact(t)
        elif op == "delete":
            t.write(data.select(["id", "part"]), operation="delete")
        else:
            t.write(data, operation=op)
    for query in ("snapshot", "read_optimized"):  # partition_stats (written by us) skip in both
        plain = HudiTable(str(path), options={**UNSKIPPED, "hoodie.datasource.query.type": query})
        reader = HudiTable(str(path), options={"hoodie.datasource.query.type": query})
        for f in filters:
            value = [f[2]] if f[1] in ("in", "not in") else f[2]
            got = reader.to_arrow(filters=[(f[0], f[1], value)])
            assert row_set(got) == row_set(plain.to_arrow(filters=[(f[0], f[1], value)])), (query, f)


def test_a_write_killed_between_the_two_commits_leaves_no_statistics(tmp_path):
    """A writer SIGKILLed after its metadata deltacommit (column_stats logs included), before its data instant
    completes: readers take none of its statistics, and the next write rolls its logs back."""
    path = tmp_path / "t"
    sorted_table(path, "COPY_ON_WRITE", files=3)
    pause = tmp_path / "pause"
    pause.mkdir()
    env = dict(os.environ, HUDI_DS_TEST_PAUSE_AT="commit_publishing", HUDI_DS_TEST_PAUSE_DIR=str(pause))
    script = ("import sys, pyarrow as pa; sys.path.insert(0, sys.argv[2]); from test_data_skipping import batch; "
              "from hudi_ds import HudiTable; HudiTable(sys.argv[1]).write(batch([900, 901], 5), "
              "operation='bulk_insert')")
    proc = subprocess.Popen([sys.executable, "-c", script, str(path), str(Path(__file__).parent)], env=env,
                            stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (pause / "commit_publishing").exists():
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else proc.returncode
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()
    [pending] = [i.requested_time for i in HudiTable(str(path)).load_timeline().pending()]
    folder = path / ".hoodie" / "metadata" / "column_stats"
    assert any(pending in p.name for p in folder.iterdir())  # the killed write's statistics are there
    stats = HudiTable(str(path))._read(lambda snap: snap.index_stats(md.COLUMN_STATS, ["id"]))
    assert stats is not None and not any(pending in name for name in stats)  # and not taken
    assert HudiTable(str(path)).to_arrow(filters=[("id", ">=", 900)]).num_rows == 0
    HudiTable(str(path), options={"hoodie.client.heartbeat.timeout.secs": "0"}).write(batch([950], 6))
    assert not any(pending in p.name for p in folder.iterdir())
    got = HudiTable(str(path)).to_arrow(filters=[("id", ">=", 900)])
    assert got["id"].to_pylist() == [950]


def test_column_stats_outlive_version_changes(tmp_path):
    """An upgrade or downgrade between 8 and 9 rebuilds the metadata table with its column_stats: reads skip
    after it, and later writes keep it in step."""
    path = tmp_path / "t"
    sorted_table(path, "COPY_ON_WRITE", version=8, files=4)
    for version, command in ((9, "upgrade"), (8, "downgrade")):
        assert cli.main([command, str(path), "--to", str(version)]) == 0
        # no small-file filling: a file holding 0-99 that took the new key would span 150 (which file is the
        # smallest is a tie between equal files)
        changed = HudiTable(str(path), options={"hoodie.parquet.small.file.limit": "0"})
        assert changed.config.metadata_partitions == ["column_stats", "files"]
        changed.write(batch([1000 + version], 2), operation="bulk_insert")
        opened = watch(changed)
        assert changed.to_arrow(filters=[("id", "=", 150)])["id"].to_pylist() == [150]
        assert len({Path(f).name for f in opened}) == 1
        opened.clear()
        assert changed.to_arrow(filters=[("id", "=", 1000 + version)])["id"].to_pylist() == [1000 + version]
        assert len({Path(f).name for f in opened}) == 1
