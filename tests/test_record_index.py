"""The metadata table's record_index partition (hudi_ds.metadata.record_index): Hudi's key -> file group hash, the
record codec, and lookups in the record indexes Apache Hudi wrote into the reference tables."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

import hudi_ds
from hudi_ds.config.table_config import load_config
from hudi_ds.metadata import record_index as ri
from hudi_ds.metadata import records as md
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.storage import open_storage

SETTINGS = settings(max_examples=80, deadline=None, suppress_health_check=[HealthCheck.too_slow])
RLI_TABLES = ["cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta", "mor_avro_v9_txns_simple_overwrite",
              "cow_v9_timebasedkeygen_epochmillis", "quickstart_mor_avro_v8_trips_8i3u1d"]


def _java_hash_by_definition(text: str) -> int:
    """s[0]*31^(n-1) + ... + s[n-1] over UTF-16 code units, reduced to a signed 32-bit int (the JDK's spec of
    String.hashCode), computed without the incremental masking the implementation uses."""
    units = text.encode("utf-16-be")
    codes = [int.from_bytes(units[i:i + 2], "big") for i in range(0, len(units), 2)]
    total = sum(c * 31 ** (len(codes) - 1 - i) for i, c in enumerate(codes)) % 2**32
    return total - 2**32 if total >= 2**31 else total


@pytest.mark.parametrize(("text", "expected"), [
    ("", 0), ("hello", 99162322), ("Aa", 2112), ("BB", 2112),
    ("polygenelubricants", -2**31),  # Integer.MIN_VALUE: Java's Math.abs leaves it negative
])
def test_java_string_hash_known_values(text, expected):
    assert ri.java_string_hash(text) == expected


def test_the_minimum_hash_lands_in_a_file_group():
    assert ri.file_group_of("polygenelubricants", 10) == 2**31 % 10


@SETTINGS
@given(st.text(max_size=40), st.integers(min_value=1, max_value=1000))
def test_hash_and_file_group_follow_the_definition(text, count):
    h = _java_hash_by_definition(text)
    assert ri.java_string_hash(text) == h
    assert 0 <= ri.file_group_of(text, count) < count


@SETTINGS
@given(st.text(min_size=1, max_size=30), st.text(max_size=30), st.one_of(st.uuids().map(str), st.text(max_size=20)),
       st.integers(min_value=0, max_value=99), st.integers(min_value=0, max_value=2**45))
def test_location_records_round_trip(key, partition, head, part, instant_ms):
    file_id = f"{head}-{part}"
    loc = md.record_location(ri.location_record(key, partition, file_id, instant_ms))
    assert loc == md.RecordLocation(partition, file_id, instant_ms, None)


@pytest.mark.parametrize("table", RLI_TABLES)
def test_every_key_maps_to_the_file_group_that_holds_it(reference_dir, table):
    """All keys of the table, looked up at once and in small batches: each maps to the latest file group holding
    it (cow_v9_timebasedkeygen_epochmillis holds a key twice, Hudi's record index names the newer copy)."""
    table_dir = reference_dir / table
    rows = hudi_ds.HudiTable(str(table_dir)).to_arrow().select(
        ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_file_name", "_hoodie_commit_time"]).to_pylist()
    newest: dict[str, tuple[str, str, str]] = {}
    for r in rows:
        where = (r["_hoodie_commit_time"], r["_hoodie_partition_path"], r["_hoodie_file_name"].split("_")[0])
        newest[r["_hoodie_record_key"]] = max(newest.get(r["_hoodie_record_key"], where), where)
    storage = open_storage(str(table_dir))
    data_timeline = load_config(storage).format.load_timeline(storage)
    mdt = MetadataTable.open(storage)
    expected = {key: (partition, file_id) for key, (_, partition, file_id) in newest.items()}
    everything = ri.all_locations(mdt, data_timeline)
    assert {k: (loc.partition, loc.file_id) for k, loc in everything.items()} == expected
    keys = sorted(expected)
    for start in range(0, len(keys), 3):
        batch = [*keys[start:start + 3], "no-such-key"]
        found = ri.lookup(mdt, data_timeline, batch)
        assert {k: (loc.partition, loc.file_id) for k, loc in found.items()} == {k: expected[k] for k in batch[:-1]}
