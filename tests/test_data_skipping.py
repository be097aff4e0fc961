"""Data skipping by the metadata table's column_stats and partition_stats (hudi_ds.read.data_skipping): a filter
opens only the files whose statistics allow a match, and every read gives the rows a read without the metadata
table (no skipping) gives, on the tables Apache Hudi wrote and on ours."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest
from tables import REFERENCE_DIR

from hudi_ds import HudiTable
from hudi_ds.cli.progress import READ, WatchedStorage

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
