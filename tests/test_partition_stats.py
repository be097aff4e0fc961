"""The metadata table's partition_stats partition as hudi_ds keeps it (hudi_ds.metadata.partition_stats_sync):
tables Apache Hudi wrote with column_stats and partition_stats take upserts and deletes, every reader agrees with
a model of the rows, and each partition's statistics cover every value its rows hold."""

from __future__ import annotations

import shutil
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import REFERENCE_DIR, hudi_rs

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate
from hudi_ds.errors import ConfigError
from hudi_ds.metadata import records as md
from hudi_ds.metadata.partition_stats_sync import apply_setting
from hudi_ds.read.data_skipping import bound_value
from hudi_ds.services.compaction import compact

# the reference tables with column_stats and partition_stats and no index hudi_ds does not maintain (whose key
# generator hudi_ds can write with: cow_v9_timebasedkeygen_epochmillis stores its partition field as text)
PARTITION_STATS_TABLES = [("mor_avro_v9_txns_simple_overwrite", "txn_id")]


def partition_stats(path: str) -> dict[str, dict[str, md.ColumnStats]]:
    stats = HudiTable(path)._read(lambda snap: snap.index_stats(md.PARTITION_STATS, None))
    assert stats
    return stats


def assert_ranges_cover_the_rows(path: str) -> None:
    """Every live row's value lies in its partition's range, and a partition's value count is at least its row
    count (an update counts its new and its old value: ranges only widen)."""
    rows = HudiTable(path).to_arrow()
    stats = partition_stats(path)
    checked = 0
    for partition in set(rows["_hoodie_partition_path"].to_pylist()):
        part = rows.filter(pa.compute.equal(rows["_hoodie_partition_path"], partition))
        columns = stats[partition or md.NON_PARTITIONED_KEY]
        for name, entry in columns.items():
            typ = part.schema.field(name).type
            low, high = bound_value(entry.min_value, typ), bound_value(entry.max_value, typ)
            values = [v for v in part[name].to_pylist() if v is not None]
            assert entry.value_count is not None and entry.value_count >= part.num_rows, (partition, name)
            if low is not None and high is not None and values:
                assert low <= min(values) and max(values) <= high, (partition, name, low, high)
                checked += 1
    assert checked > 10


def model_rows(t: pa.Table, key: str) -> dict[Any, dict[str, Any]]:
    return {r[key]: r for r in t.drop_columns([c for c in t.column_names if c.startswith("_hoodie_")]).to_pylist()}


@pytest.mark.parametrize(("reference", "key"), PARTITION_STATS_TABLES)
def test_a_hudi_table_with_partition_stats_takes_upserts_and_deletes(tmp_path, reference, key):
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / reference, copy, copy_function=shutil.copyfile)
    start = HudiTable(str(copy)).to_arrow()
    model = model_rows(start, key)
    data = start.drop_columns([c for c in start.column_names if c.startswith("_hoodie_")])
    changed = data.slice(0, 1)
    fresh = data.slice(1, 1).set_column(data.column_names.index(key), key, pa.array(["NEW-1"]))
    # the existing key's row moves to a later time; the new one sits below every key the table had
    ordering = "txn_ts"
    changed = changed.set_column(changed.column_names.index(ordering), ordering,
                                 pa.compute.add(changed[ordering], 1_000_000))
    upsert = pa.concat_tables([changed, fresh])
    HudiTable(str(copy)).write(upsert)
    model.update(model_rows(upsert, key))
    gone = data.slice(2, 1)
    HudiTable(str(copy)).write(gone, operation="delete")
    model.pop(gone[key][0].as_py())

    for step in ("written", "compacted"):
        if step == "compacted":
            compact(HudiTable(str(copy)))
        ours = HudiTable(str(copy)).to_arrow()
        assert sorted(model_rows(ours, key).items()) == sorted(model.items()), step
        assert sorted(hudi_rs(str(copy))[key].to_pylist()) == sorted(model), step
        assert_ranges_cover_the_rows(str(copy))
        plain = HudiTable(str(copy), options={"hoodie.metadata.enable": "false"})
        for column, value in [(key, "NEW-1"), (ordering, changed[ordering][0].as_py())]:
            for read_optimized in (False, True):
                options = {"hoodie.datasource.query.type": "read_optimized"} if read_optimized else {}
                got = HudiTable(str(copy), options=options).to_arrow(filters=[(column, "=", value)])
                want = HudiTable(str(copy), options={**options, "hoodie.metadata.enable": "false"}).to_arrow(
                    filters=[(column, "=", value)])
                assert sorted(got[key].to_pylist()) == sorted(want[key].to_pylist()), (step, column)
    assert plain.to_arrow(filters=[(key, "=", "NEW-1")]).num_rows == 1
    assert (copy / ".hoodie" / "metadata" / "partition_stats").is_dir()


PS_OPTIONS = {"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
              "hoodie.metadata.index.column.stats.enable": "true", "hoodie.index.type": "SIMPLE",
              "hoodie.metadata.compact.max.delta.commits": "2"}


def rows(ids: list[int], ts: int) -> pa.Table:
    return pa.table({"id": ids, "part": [f"p{i % 2}" for i in ids], "ts": [ts] * len(ids),
                     "name": [f"n{i:03d}" for i in ids], "val": pa.array([None if i % 5 == 0 else i * ts for i in ids],
                                                                        pa.int64())})


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_the_option_builds_keeps_and_drops_partition_stats(tmp_path, table_type):
    path = str(tmp_path / "t")
    t = HudiTable.create(path, table_name="t", record_key="id", ordering_field="ts", partition_by="part",
                         table_type=table_type, options=PS_OPTIONS)
    t.write(rows(list(range(20)), 1))
    HudiTable(path, options={"hoodie.metadata.index.partition.stats.enable": "true"}).write(rows([3, 40], 2))
    folder = tmp_path / "t" / ".hoodie" / "metadata" / "partition_stats"
    names = sorted(p.name for p in folder.iterdir())
    assert any(n.startswith(".partition-stats-0000-0_00000000000000003.log.1_") for n in names), names
    assert "partition_stats" in (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text()
    stats = partition_stats(path)
    assert set(stats) == {"p0", "p1"}
    assert stats["p0"]["id"].file_name == "p0" and not stats["p0"]["id"].is_deleted
    for k in range(3):  # updates, deletes and the metadata compaction that folds partition_stats too
        HudiTable(path, options=PS_OPTIONS).write(rows([1, 2, 50 + k, 90 - k], 3 + k))
        HudiTable(path, options=PS_OPTIONS).write(rows([4 + k], 3 + k).select(["id", "part"]), operation="delete")
        if table_type == "MERGE_ON_READ":
            compact(HudiTable(path))
        assert_ranges_cover_the_rows(path)
    assert any(p.name.endswith(".hfile") for p in folder.iterdir())
    assert sorted(hudi_rs(path)["id"].to_pylist()) == sorted(HudiTable(path).to_arrow()["id"].to_pylist())
    plain = HudiTable(path, options={"hoodie.metadata.enable": "false"})
    for f in [("id", "=", 89), ("val", ">", 200), ("name", "<", "n002")]:
        assert sorted(HudiTable(path).to_arrow(filters=[f])["id"].to_pylist()) == \
            sorted(plain.to_arrow(filters=[f])["id"].to_pylist()), f

    HudiTable(path, options={"hoodie.metadata.index.partition.stats.enable": "false"}).write(rows([7], 9))
    assert not folder.exists()
    assert "partition_stats" not in (tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text()


def test_partition_stats_need_column_stats(tmp_path):
    path = str(tmp_path / "t")
    options = {**PS_OPTIONS, "hoodie.metadata.index.column.stats.enable": "false",
               "hoodie.metadata.index.partition.stats.enable": "true"}
    with pytest.raises(ConfigError, match="hoodie.metadata.index.column.stats.enable=true"):
        HudiTable.create(path, table_name="t", record_key="id", ordering_field="ts", partition_by="part",
                         options=options).write(rows([1], 1))
    t = HudiTable.create(str(tmp_path / "u"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="part", options={**PS_OPTIONS, "hoodie.metadata.index.partition.stats.enable":
                                                       "true"})
    t.write(rows([1, 2], 1))
    assert (tmp_path / "u" / ".hoodie" / "metadata" / "partition_stats").is_dir()
    HudiTable(str(tmp_path / "u"), options={"hoodie.metadata.index.column.stats.enable": "false"}).write(rows([3], 2))
    assert not (tmp_path / "u" / ".hoodie" / "metadata" / "partition_stats").exists()  # dropped with column_stats


def statistics_check(path: str) -> dict[str, Any]:
    [check] = [c for c in validate(path)["checks"] if c["name"] == "column and partition statistics match the files"]
    return check


def test_validate_names_statistics_that_do_not_match_the_files(tmp_path):
    """A live base file replaced by one with other values (same name): validate names each column whose
    column_stats differ from the footer and each partition range that no longer covers the file."""
    path = str(tmp_path / "t")
    t = HudiTable.create(path, table_name="t", record_key="id", ordering_field="ts", partition_by="part",
                         options={**PS_OPTIONS, "hoodie.metadata.index.partition.stats.enable": "true"})
    t.write(rows(list(range(10)), 1))
    t.write(rows([2, 3, 11], 2))
    good = statistics_check(path)
    assert good["status"] == "ok" and good["detail"] == "2 live base files checked", good
    for reference in ("mor_avro_v9_txns_simple_overwrite", "quickstart_mor_avro_v8_trips_8i3u1d"):
        assert statistics_check(str(REFERENCE_DIR / reference))["status"] == "ok", reference

    victim = max((tmp_path / "t" / "p1").glob("*.parquet"), key=lambda p: p.name.rsplit("_", 1)[-1])  # live
    original = pq.read_table(victim)
    changed = original.set_column(original.schema.get_field_index("id"), "id",
                                  pa.array([v + 1000 for v in original["id"].to_pylist()], pa.int64()))
    pq.write_table(changed, victim)
    bad = statistics_check(path)
    assert bad["status"] == "failed"
    where = f"p1/{victim.name} column 'id'"
    assert any(e.startswith(where) and "min" in e for e in bad["errors"]), bad["errors"]
    assert any(e.startswith(where) and "max" in e for e in bad["errors"]), bad["errors"]
    assert any(e.startswith("partition_stats of 'p1' column 'id': max") and victim.name in e
               for e in bad["errors"]), bad["errors"]
    assert not any("column 'name'" in e for e in bad["errors"])  # the columns left as they were agree


def test_merged_decimal_ranges_cover_both_ranges():
    """Decimal bounds (unscaled big-endian bytes) merge by value: 89.99 and 1250.00 widen to [89.99, 1250.00]."""
    def entry(low: int, high: int) -> dict[str, Any]:
        def wrap(v: int) -> tuple[str, dict[str, Any]]:
            return ("org.apache.hudi.avro.model.BytesWrapper",
                    {"value": v.to_bytes(v.bit_length() // 8 + 1, "big", signed=True)})
        return md.column_stats_record("k", md.RecordType.PARTITION_STATS, {
            "fileName": "p", "columnName": "amount", "minValue": wrap(low), "maxValue": wrap(high),
            "valueCount": 1, "nullCount": 0, "totalSize": None, "totalUncompressedSize": None,
            "isDeleted": False, "isTightBound": False})
    merged = md.combine(entry(125000, 125000), entry(8999, 8999))
    assert merged is not None
    stats = md.column_stats(merged)
    assert stats.min_value is not None and stats.max_value is not None
    assert int.from_bytes(stats.min_value.value, "big", signed=True) == 8999
    assert int.from_bytes(stats.max_value.value, "big", signed=True) == 125000


def test_partition_stats_built_by_us_equal_the_ones_hudi_wrote(tmp_path):
    """partition_stats dropped and built again from the committed files (what the option does off, then on) hold
    the records Apache Hudi 1.1 wrote for the same files: bounds, counts, value types and tight bounds."""
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / "mor_avro_v9_txns_simple_overwrite", copy, copy_function=shutil.copyfile)
    hudi = partition_stats(str(copy))
    t = HudiTable(str(copy))
    config = t.config
    for enable in (False, True):
        config = apply_setting(t.storage, config, enable)
    ours = partition_stats(str(copy))
    assert set(ours) == set(hudi)

    def fields(s: md.ColumnStats) -> tuple[Any, ...]:
        return (s.min_value, s.max_value, s.null_count, s.value_count, s.value_type_ordinal, s.is_tight_bound)

    assert {p: {c: fields(s) for c, s in cols.items()} for p, cols in ours.items()} == \
        {p: {c: fields(s) for c, s in cols.items()} for p, cols in hudi.items()}
