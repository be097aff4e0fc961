"""Tables without a record key (Python API): append-only writes whose rows get Apache Hudi's generated keys
(`<instant>_<task>_<row>`), read back as written (duplicates kept) by our reader and by hudi-rs."""

from __future__ import annotations

import random
import re
from collections import Counter
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import META, hudi_rs, rows

from hudi_ds import ConfigError, HudiTable, TableExistsError
from hudi_ds.config.properties import loads
from hudi_ds.index.bucket import bucket_of_file_id
from hudi_ds.keys.auto_keys import auto_key_bucket
from hudi_ds.storage.layout import PROPS_PATH

SCHEMA = pa.schema([("event", pa.string()), ("v", pa.int64()), ("dt", pa.string()), ("kind", pa.string())])
COLUMNS = ["event", "v", "dt", "kind"]
LAYOUTS = {  # name: (partition_by, hive_style, key generator Spark infers without a record key)
    "nonpartitioned": ([], False, "NonpartitionedKeyGenerator"),
    "plain": (["dt"], False, "SimpleKeyGenerator"),
    "two_level": (["dt", "kind"], True, "ComplexKeyGenerator"),
}
KEY = re.compile(r"^(\d{17})_(\d+)_(\d+)$")


def events(rng: random.Random, n: int) -> pa.Table:
    """Rows with many exact duplicates: a key-less table must keep every one."""
    return pa.Table.from_pylist(
        [{"event": f"e{rng.randrange(4)}", "v": rng.randrange(3), "dt": rng.choice(["d1", "d2"]),
          "kind": rng.choice(["x", "y"])} for _ in range(n)], schema=SCHEMA)


def multiset(table: pa.Table) -> Counter:
    return Counter(tuple(r[c] for c in COLUMNS) for r in table.select(COLUMNS).to_pylist())


def without_partitions(model: Counter, data: pa.Table, parts: list[str]) -> Counter:
    """The model after an insert_overwrite of `data`: rows of the partitions `data` touches are gone."""
    def part(row: tuple) -> tuple:
        return tuple(row[COLUMNS.index(p)] for p in parts)

    touched = {part(r) for r in multiset(data)}
    return Counter({r: n for r, n in model.items() if part(r) not in touched})


def check_keys(t: HudiTable, snapshot: pa.Table) -> None:
    """Keys are unique, in Hudi's generated form, name the commit that wrote them, and sit in their bucket."""
    keys = snapshot["_hoodie_record_key"].to_pylist()
    assert len(keys) == len(set(keys))
    for r in snapshot.select(["_hoodie_record_key", "_hoodie_commit_time", "_hoodie_file_name"]).to_pylist():
        m = KEY.match(r["_hoodie_record_key"])
        assert m, r["_hoodie_record_key"]
        instant, task = m.group(1), int(m.group(2))
        assert instant == r["_hoodie_commit_time"] and task == 0
        assert bucket_of_file_id(r["_hoodie_file_name"]) == auto_key_bucket(instant, task, t.config.num_buckets)


def check_readers_agree(t: HudiTable) -> pa.Table:
    ours = t.to_arrow()
    assert rows(ours, META + COLUMNS) == rows(hudi_rs(t.path), META + COLUMNS)
    if t.config.is_mor:
        assert rows(t.to_arrow(read_optimized=True), META + COLUMNS) == \
            rows(hudi_rs(t.path, read_optimized=True), META + COLUMNS)
    check_keys(t, ours)
    return ours


@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_create_writes_the_properties_hudi_writes_for_keyless_tables(tmp_path, layout):
    parts, hive, keygen = LAYOUTS[layout]
    t = HudiTable.create(str(tmp_path / "t"), table_name="kl", partition_by=parts, hive_style_partitioning=hive)
    props = loads((Path(t.path) / PROPS_PATH).read_text())
    assert "hoodie.table.recordkey.fields" not in props
    assert "hoodie.table.precombine.field" not in props
    assert props["hoodie.table.keygenerator.class"] == "org.apache.hudi.keygen." + keygen
    assert props["hoodie.table.partition.fields"] == ",".join(parts)
    assert t.config.record_key_fields == []
    assert HudiTable.create(t.path, table_name="kl", partition_by=parts, hive_style_partitioning=hive).path == t.path


@pytest.mark.interop
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("layout", list(LAYOUTS))
def test_appends_and_overwrites_round_trip(tmp_path, table_type, layout):
    parts, hive, _ = LAYOUTS[layout]
    rng = random.Random(f"{table_type}{layout}")
    t = HudiTable.create(str(tmp_path / "t"), table_name="kl", partition_by=parts, hive_style_partitioning=hive,
                         table_type=table_type, buckets=3)
    expected: Counter = Counter()
    first = events(rng, 30)
    c1 = t.write(first)  # the default operation of a key-less table: insert
    expected += multiset(first)
    again = events(rng, 20)
    t.write(again, operation="insert")
    t.write(first, operation="bulk_insert")  # the same rows once more: kept, with new keys
    expected += multiset(again) + multiset(first)
    ours = check_readers_agree(t)
    assert multiset(ours) == expected
    assert t.timeline()[0].requested_time == c1
    assert multiset(t.incremental(c1)) == multiset(again) + multiset(first)

    if parts:
        fresh = events(rng, 10).filter(pa.compute.equal(pa.compute.field("dt"), "d1"))
        t.write(fresh, operation="insert_overwrite")
        expected = without_partitions(expected, fresh, parts) + multiset(fresh)
        assert multiset(check_readers_agree(t)) == expected
    if t.config.is_mor:
        t.compact()
        assert multiset(check_readers_agree(t)) == expected
    final = events(rng, 12)
    t.write(final, operation="insert_overwrite_table")
    assert multiset(check_readers_agree(t)) == multiset(final)


def _files(path: str) -> list[str]:
    return sorted(str(p.relative_to(path)) for p in Path(path).rglob("*") if ".hoodie" not in p.parts)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("operation", ["upsert", "delete"])
def test_keyed_operations_are_refused_and_change_nothing(tmp_path, table_type, operation):
    t = HudiTable.create(str(tmp_path / "t"), table_name="kl", partition_by="dt", table_type=table_type)
    t.write(events(random.Random(1), 10))
    before, timeline, files = t.to_arrow(), t.timeline(), _files(t.path)
    batches = iter(events(random.Random(2), 5).to_batches())
    with pytest.raises(ConfigError) as err:
        t.write(batches, operation=operation)
    message = str(err.value)
    assert f"{operation} needs a record key" in message and "insert" in message
    assert "create the table with a record key" in message
    assert next(batches).num_rows == 5, "the input must not be consumed"
    assert t.to_arrow().equals(before) and t.timeline() == timeline and _files(t.path) == files


def test_keyless_settings_conflicts(tmp_path):
    with pytest.raises(ConfigError, match="ordering_field 'ts' needs a record key"):
        HudiTable.create(str(tmp_path / "a"), table_name="kl", ordering_field="ts")
    assert not (tmp_path / "a").exists()
    keyed = HudiTable.create(str(tmp_path / "b"), table_name="k", record_key="event")
    with pytest.raises(TableExistsError, match="record_key"):
        HudiTable.create(keyed.path, table_name="k")
    keyless = HudiTable.create(str(tmp_path / "c"), table_name="k")
    with pytest.raises(TableExistsError, match="record_key"):
        HudiTable.create(keyless.path, table_name="k", record_key="event")


def test_rows_of_one_write_continue_numbering_across_batches(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="kl", buckets=2)
    data = events(random.Random(3), 25)
    instant = t.write(data.to_batches(max_chunksize=7))
    keys = sorted(t.to_arrow()["_hoodie_record_key"].to_pylist(), key=lambda k: int(k.rsplit("_", 1)[1]))
    assert keys == [f"{instant}_0_{i}" for i in range(25)]


OPS = st.sampled_from(["insert", "insert", "bulk_insert", "insert_overwrite", "insert_overwrite_table"])


@pytest.mark.interop
@settings(max_examples=15, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                 HealthCheck.function_scoped_fixture])
@given(seed=st.integers(0, 10_000), table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]),
       ops=st.lists(OPS, min_size=1, max_size=5))
def test_any_append_sequence_reads_as_the_multiset_model(tmp_path_factory, seed, table_type, ops):
    rng = random.Random(seed)
    t = HudiTable.create(str(tmp_path_factory.mktemp("kl") / "t"), table_name="kl", partition_by="dt",
                         table_type=table_type, buckets=rng.randint(1, 3))
    model: Counter = Counter()
    for op in ops:
        data = events(rng, rng.randint(0, 15))
        t.write(data, operation=op)
        if op == "insert_overwrite_table":
            model = Counter()
        elif op == "insert_overwrite":
            model = without_partitions(model, data, ["dt"])
        model += multiset(data)
    assert multiset(check_readers_agree(t)) == model
