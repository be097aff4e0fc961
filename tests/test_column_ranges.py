"""Column statistics carried from the write tasks (hudi_ds.metadata.column_ranges): the column_stats records a
commit builds from the ranges its tasks reported are the ones the files' footers give, the commit opens none of
the files it wrote, and the meta columns Hudi indexes (record key, partition path) get entries."""

from __future__ import annotations

import datetime
import decimal
import itertools
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs

from hudi_ds import HudiTable
from hudi_ds.cli.progress import READ, WatchedStorage
from hudi_ds.cli.validate import validate
from hudi_ds.config.table_config import load_config
from hudi_ds.files.base_file import write_base_file
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.metadata import records as md
from hudi_ds.metadata.column_ranges import ColumnRange
from hudi_ds.metadata.column_stats import file_group_slices
from hudi_ds.metadata.column_stats_sync import (
    apply_setting,
    base_file_ranges,
    compact,
    file_ranges,
    file_records,
    indexed_columns,
    ranges_schema,
)
from hudi_ds.metadata.hfiles import encode_base_file
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import merged_records
from hudi_ds.schema.avro import arrow_to_avro
from hudi_ds.schema.meta import PARTITION_PATH, RECORD_KEY, with_meta
from hudi_ds.storage import open_storage

TYPES = {"i": pa.int64(), "n": pa.int32(), "f": pa.float64(), "s": pa.string(), "d": pa.date32(),
         "t": pa.timestamp("us", tz="UTC"), "ms": pa.timestamp("ms"), "m": pa.decimal128(12, 3), "b": pa.bool_(),
         "raw": pa.binary()}
VALUES = {
    "i": st.integers(min_value=-2**63, max_value=2**63 - 1), "n": st.integers(min_value=-2**31, max_value=2**31 - 1),
    "f": st.floats(allow_nan=False), "s": st.text(max_size=4), "d": st.dates(),
    "t": st.datetimes(timezones=st.just(datetime.timezone.utc)),
    "ms": st.datetimes().map(lambda d: d.replace(microsecond=d.microsecond // 1000 * 1000)),
    "m": st.decimals(min_value=-10**8, max_value=10**8, places=3), "b": st.booleans(), "raw": st.binary(max_size=3),
}


@st.composite
def base_files(draw: st.DrawFn) -> tuple[pa.Table, int | None]:
    """Rows of a base file (meta columns filled as a write fills them, every data column nullable) and a row
    group size (None: one row group)."""
    n = draw(st.integers(min_value=0, max_value=12))
    columns = {c: pa.array(draw(st.lists(st.one_of(st.none(), VALUES[c]), min_size=n, max_size=n)), TYPES[c])
               for c in TYPES}
    keys = draw(st.lists(st.text(min_size=1, max_size=5), min_size=n, max_size=n, unique=True))
    data = pa.table({RECORD_KEY: pa.array(keys, pa.string()), **columns})
    schema = with_meta(data.schema)
    table = pa.table({f.name: data[f.name] if f.name in data.column_names
                      else pa.array(["p=1" if f.name == PARTITION_PATH else "20240101000000000"] * n, f.type)
                      for f in schema}, schema=schema)
    return table, draw(st.one_of(st.none(), st.integers(min_value=1, max_value=5)))


_NAMES = itertools.count()


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(base_files())
def test_records_from_the_written_footer_equal_the_records_read_back(tmp_path, case):
    """What a task reports (the footer its writer produced) and what the commit would read from the file give
    byte-for-byte the same column_stats records, the record key and partition path included."""
    records, row_group_rows = case
    storage = open_storage(str(tmp_path))
    name = f"f{next(_NAMES)}-0_0-0-0_20240101000000000.parquet"
    _, footer = write_base_file(storage, "20240101000000000", "p=1", name, records,
                                arrow_to_avro(records.schema, "t"), compression="snappy", dictionary=[],
                                merge=False, row_group_rows=row_group_rows)
    reported = file_ranges(footer)
    read_back = base_file_ranges(storage, "p=1", name)
    assert reported == read_back
    for version in (8, 9):
        columns = indexed_columns(ranges_schema(reported))
        assert file_records("p=1", name, reported, columns, version) == \
            file_records("p=1", name, read_back, columns, version)
    by_name = {r.column: r for r in reported}
    assert "raw" not in by_name  # binary columns get no statistics
    if records.num_rows:
        keys = records[RECORD_KEY].to_pylist()
        assert (by_name[RECORD_KEY].low, by_name[RECORD_KEY].high, by_name[RECORD_KEY].nulls) == \
            (min(keys), max(keys), 0)
        assert (by_name[PARTITION_PATH].low, by_name[PARTITION_PATH].high) == ("p=1", "p=1")
    for column in TYPES:
        if column == "raw" or not records.num_rows:  # an empty file's footer has no statistics
            continue
        r = by_name[column]
        values = records[column]
        present = values.drop_null()
        assert (r.values, r.nulls) == (len(values), values.null_count)
        if len(present) and column != "f":  # parquet's float bounds may be widened (-0.0 / 0.0)
            assert (r.low, r.high) == (pa.compute.min(present).as_py(), pa.compute.max(present).as_py())
    assert all(isinstance(r, ColumnRange) for r in reported)
    pq.read_table(storage.full(f"p=1/{name}"))  # the file stays readable


# ---- end to end, through HudiTable writes ---------------------------------------------------------------------

OPTIONS = {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
           "hoodie.metadata.index.column.stats.enable": "true",
           "hoodie.metadata.index.partition.stats.enable": "true", "hoodie.index.type": "SIMPLE",
           "hoodie.parquet.small.file.limit": "0", "hoodie.metadata.compact.max.delta.commits": "3",
           "hoodie.compact.inline.max.delta.commits": "2"}


def batch(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": ids, "part": [f"p{i % 2}" for i in ids], "ts": [ts] * len(ids),
                     "day": [datetime.date(2024, 1, 1) + datetime.timedelta(days=i % 40) for i in ids],
                     "amount": pa.array([decimal.Decimal(i) / 4 for i in ids], pa.decimal128(12, 2)),
                     "name": [None if i % 7 == 0 else f"n{i:05d}" for i in ids]})


def column_stats_records(path: Path) -> dict[str, dict]:
    """Key -> record of the column_stats partition (every file group's merged slice)."""
    table = HudiTable(str(path))
    mdt = MetadataTable.open(table.storage)
    out: dict[str, dict] = {}
    for sl in file_group_slices(mdt, md.COLUMN_STATS, mdt.timeline(), table.load_timeline()):
        out.update(merged_records(mdt, sl))
    return out


def test_a_commit_indexes_its_files_without_opening_them(tmp_path):
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="c", record_key="id", ordering_field="ts", partition_by="part",
                         table_type="COPY_ON_WRITE", options=OPTIONS)
    t.write(batch(list(range(40)), 1), operation="bulk_insert")
    opened: list[str] = []
    t = HudiTable(str(path))
    t.storage = WatchedStorage(t.storage, lambda kind, rel: opened.append(rel) if kind == READ else None)
    instant = t.write(batch(list(range(30, 60)), 2))
    new_files = {p.name for p in path.glob("p*/*.parquet") if instant in p.name}
    assert new_files and not new_files & {Path(rel).name for rel in opened}
    entries = {r["ColumnStatsMetadata"]["fileName"] for r in column_stats_records(path).values()}
    assert new_files <= entries


def test_statistics_carried_from_the_tasks_equal_a_rebuild_from_the_footers(tmp_path):
    """Writes of both table types (a compaction, a clean): the column_stats the commits built equal what
    building the partition afresh from the files' footers gives; validate finds nothing; filters on data and
    meta columns read what an unskipped read does, and hudi-rs reads the same rows."""
    for table_type in ("COPY_ON_WRITE", "MERGE_ON_READ"):
        path = tmp_path / table_type
        t = HudiTable.create(str(path), table_name="c", record_key="id", ordering_field="ts", partition_by="part",
                             table_type=table_type, options={**OPTIONS, "hoodie.clean.commits.retained": "1"})
        t.write(batch(list(range(0, 50)), 1), operation="bulk_insert")
        for k, ids in enumerate([range(40, 80), range(10, 20), range(70, 120), range(0, 5)]):
            HudiTable(str(path)).write(batch(list(ids), k + 2))
        HudiTable(str(path)).write(batch([3, 55], 9).select(["id", "part"]), operation="delete")
        written = column_stats_records(path)
        assert any(r["ColumnStatsMetadata"]["columnName"] == RECORD_KEY for r in written.values())
        assert any(r["ColumnStatsMetadata"]["columnName"] == PARTITION_PATH for r in written.values())
        report = validate(str(path))
        assert report["ok"], report["errors"]

        t = HudiTable(str(path))
        plain = HudiTable(str(path), options={"hoodie.metadata.enable": "false"})
        for f in [("id", ">=", 100), ("name", "=", "n00045"), (RECORD_KEY, "=", "7"), (RECORD_KEY, ">", "9"),
                  (PARTITION_PATH, "=", "p1"), ("day", "<", datetime.date(2024, 1, 3))]:
            assert sorted(t.to_arrow(filters=[f])["id"].to_pylist()) == \
                sorted(plain.to_arrow(filters=[f])["id"].to_pylist()), (table_type, f)
        assert sorted(hudi_rs(str(path))["id"].to_pylist()) == sorted(t.to_arrow()["id"].to_pylist())

        # the partition dropped and built again from the committed files' footers
        apply_setting(t.storage, t.config, False)
        apply_setting(t.storage, load_config(t.storage), True)
        assert column_stats_records(path) == written, table_type


def test_the_compaction_writes_the_records_merged_one_by_one(tmp_path):
    """The metadata compaction passes the base file's untouched entries on as bytes: its base files are
    byte for byte those of every record decoded, merged and encoded again."""
    path = tmp_path / "t"
    t = HudiTable.create(str(path), table_name="c", record_key="id", ordering_field="ts", partition_by="part",
                         table_type="COPY_ON_WRITE", options=OPTIONS)  # compacting after every 3 deltacommits
    t.write(batch(list(range(0, 50)), 1), operation="bulk_insert")
    for k, ids in enumerate([range(40, 80), range(10, 20), range(60, 70)]):
        HudiTable(str(path), options=OPTIONS).write(batch(list(ids), k + 2))
    HudiTable(str(path), options=OPTIONS).write(batch([3, 55], 9).select(["id", "part"]), operation="delete")
    mdt = MetadataTable.open(t.storage)
    slices = file_group_slices(mdt, md.COLUMN_STATS, mdt.timeline(), t.load_timeline())
    assert all(sl.base and sl.logs for sl in slices)
    for sl, stat in zip(slices, compact(mdt, slices, "20990102000000000"), strict=True):
        expected = encode_base_file(merged_records(mdt, sl), mdt.version)
        ours = mdt.storage.read_bytes(stat.path)
        assert list(AvroHFileReader(ours, "ours").hfile) == list(AvroHFileReader(expected, "expected").hfile)
