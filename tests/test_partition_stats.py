"""The metadata table's partition_stats partition as hudi_ds keeps it (hudi_ds.metadata.partition_stats_sync):
tables Apache Hudi wrote with column_stats and partition_stats take upserts and deletes, every reader agrees with
a model of the rows, and each partition's statistics cover every value its rows hold."""

from __future__ import annotations

import shutil
from typing import Any

import pyarrow as pa
import pytest
from tables import REFERENCE_DIR, hudi_rs

from hudi_ds import HudiTable
from hudi_ds.metadata import records as md
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
