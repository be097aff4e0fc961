"""Partition paths of Apache Hudi's timestamp-based and custom key generators (hoodie.keygen.timebased.*): the paths
Hudi's generator makes for known instants, a DATE_STRING pattern reading back what it formats, refusals by name, and
tables created or written through HudiTable that hudi-rs reads."""

from __future__ import annotations

import datetime as dt
import shutil
from pathlib import Path

import pyarrow as pa
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import ConfigError, HudiTable, InvalidDataError
from hudi_ds.config import properties
from hudi_ds.keys.timestamp_partition import TimestampPartition

P = "hoodie.keygen.timebased."
HOUR = "yyyy/MM/dd/HH"


def paths(settings_: dict[str, str], values: list, type_: pa.DataType | None = None) -> list[str]:
    return TimestampPartition.of(settings_).values(pa.array(values, type_), "ts").to_pylist()


@pytest.mark.parametrize("kind,value,zone,want", [
    # instants and the paths Apache Hudi put them in (reference table cow_v9_timebasedkeygen_epochmillis, whose
    # SQL comments name the hours wrongly: 1705311000000 is 09:30 UTC)
    ("EPOCHMILLISECONDS", 1705311000000, "UTC", "2024/01/15/09"),
    ("EPOCHMILLISECONDS", 1705367700000, "UTC", "2024/01/16/01"),
    ("EPOCHMILLISECONDS", 1705485600000, "UTC", "2024/01/17/10"),
    ("EPOCHMILLISECONDS", 1705311000000, "Asia/Shanghai", "2024/01/15/17"),
    ("EPOCHMILLISECONDS", 1705311000000, "GMT-08:00", "2024/01/15/01"),
    ("UNIX_TIMESTAMP", 1705311000, "UTC", "2024/01/15/09"),
    ("EPOCHMICROSECONDS", 1705311000000123, "UTC", "2024/01/15/09"),
    ("EPOCHMICROSECONDS", -1, "UTC", "1970/01/01/00"),  # Java's conversion rounds towards zero: 0 ms
    ("EPOCHMILLISECONDS", None, "UTC", "1970/01/01/00"),  # Hudi's default value of a null: 1
])
def test_numeric_instants_make_hudis_paths(kind, value, zone, want):
    assert paths({P + "timestamp.type": kind, P + "output.dateformat": HOUR, P + "timezone": zone}, [value],
                 pa.int64()) == [want]


def test_scalar_values_count_their_time_unit_and_output_zone_wins():
    days = {P + "timestamp.type": "SCALAR", P + "timestamp.scalar.time.unit": "days",
            P + "output.dateformat": "yyyy-MM-dd", P + "output.timezone": "UTC"}
    assert paths(days, [19737, 0], pa.int32()) == ["2024-01-15", "1970-01-01"]
    nanos = {**days, P + "timestamp.scalar.time.unit": "NANOSECONDS", P + "output.dateformat": "HH:mm:ss.SSS"}
    assert paths(nanos, [1_705_311_000_123_999_999, -999_999], pa.int64()) == ["09:30:00.123", "00:00:00.000"]


def test_date_strings_follow_their_offset_unless_a_zone_is_set():
    fmt = {P + "timestamp.type": "DATE_STRING", P + "input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ",
           P + "output.dateformat": HOUR}
    # the reference table cow_v6_timebasedkeygen_nonhivestyle holds 2023-04-01T12:01:00.123Z in 2023/04/01/12
    assert paths(fmt, ["2023-04-01T12:01:00.123Z", "2023-04-05T23:59:59.999+0200"]) == ["2023/04/01/12",
                                                                                      "2023/04/05/23"]
    assert paths({**fmt, P + "output.timezone": "UTC"}, ["2023-04-05T23:59:59.999+0200"]) == ["2023/04/05/21"]
    several = {**fmt, P + "input.dateformat": "yyyy-MM-dd HH:mm,yyyyMMdd", P + "timezone": "UTC"}
    assert paths(several, ["2024-02-29 07:30", "20240301"]) == ["2024/02/29/07", "2024/03/01/00"]


@settings(max_examples=100, deadline=None)
@given(st.datetimes(min_value=dt.datetime(1970, 1, 1), max_value=dt.datetime(2200, 1, 1)),
       st.sampled_from(["yyyy-MM-dd HH:mm:ss.SSS", "yyyyMMddHHmmssSSS", "y/M/d H-m-s", "'day' dd.MM.yyyy'T'HH"]))
def test_a_date_string_pattern_reads_back_what_it_formats(moment, pattern):
    ms = int(moment.replace(tzinfo=dt.timezone.utc).timestamp() * 1000)
    fmt = {P + "output.dateformat": pattern, P + "timezone": "UTC"}
    text = paths({**fmt, P + "timestamp.type": "EPOCHMILLISECONDS"}, [ms], pa.int64())[0]
    again = paths({**fmt, P + "timestamp.type": "DATE_STRING", P + "input.dateformat": pattern}, [text])[0]
    assert again == text


@pytest.mark.parametrize("setting,value,named", [
    (P + "output.dateformat", "yyyy-MMM-dd", "MMM"),
    (P + "output.dateformat", "EEE yyyy", "EEE"),
    (P + "output.dateformat", "yyyy hh", "hh"),
    (P + "input.dateformat", "yy-MM-dd", "yy"),
    (P + "timestamp.type", "MIXED", "MIXED"),
    (P + "timezone", "Mars/Olympus", "Mars/Olympus"),
    (P + "timestamp.scalar.time.unit", "FORTNIGHTS", "FORTNIGHTS"),
])
def test_unsupported_settings_are_refused_by_name(setting, value, named):
    base = {P + "timestamp.type": "DATE_STRING" if "input" in setting else "SCALAR",
            P + "input.dateformat": "yyyy", P + "output.dateformat": HOUR, setting: value}
    with pytest.raises(ConfigError, match=named):
        TimestampPartition.of(base)


def test_values_of_the_wrong_kind_are_refused():
    with pytest.raises(InvalidDataError, match="integer"):
        paths({P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": HOUR}, ["2024"])
    with pytest.raises(InvalidDataError, match="matches none"):
        paths({P + "timestamp.type": "DATE_STRING", P + "input.dateformat": "yyyy-MM-dd",
               P + "output.dateformat": HOUR}, ["15/01/2024"])


def _partition_of(t: HudiTable) -> dict[str, str]:
    got = t.to_arrow(columns=["id", "_hoodie_partition_path"]).to_pylist()
    return {r["id"]: r["_hoodie_partition_path"] for r in got}


@pytest.mark.parametrize("version", [6, 9])
def test_a_timestamp_keyed_table_hudi_py_creates(tmp_path, version):
    """Created with TimestampBasedKeyGenerator: hoodie.properties keeps the settings, rows land in the paths Hudi's
    generator makes, an update stays in its file group, hudi-rs reads the same rows."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="v",
                         partition_by="ts", table_type="COPY_ON_WRITE", options={
                             "hoodie.index.type": "SIMPLE", "hoodie.write.table.version": str(version),
                             "hoodie.datasource.write.keygenerator.class":
                                 "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
                             P + "timestamp.type": "EPOCHMILLISECONDS", P + "output.dateformat": HOUR,
                             P + "timezone": "UTC"})
    props = properties.loads((tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text())
    assert props[P + "timestamp.type"] == "EPOCHMILLISECONDS" and props[P + "output.dateformat"] == HOUR
    first = pa.table({"id": ["a", "b"], "ts": pa.array([1705311000000, 1705367700000], pa.int64()), "v": [1, 1]})
    t.write(first)
    assert _partition_of(t) == {"a": "2024/01/15/09", "b": "2024/01/16/01"}
    assert (tmp_path / "t" / "2024" / "01" / "15" / "09").is_dir()
    held = {r["id"]: r["_hoodie_file_name"].split("_")[0] for r in t.to_arrow().to_pylist()}
    t.write(pa.table({"id": ["a", "c"], "ts": pa.array([1705311000000, 1705485600000], pa.int64()), "v": [2, 1]}))
    t.write(pa.table({"id": ["b"], "ts": pa.array([1705367700000], pa.int64())}), operation="delete")
    after = t.to_arrow()
    assert {r["id"]: r["_hoodie_file_name"].split("_")[0] for r in after.to_pylist()}["a"] == held["a"]
    want = [("a", 1705311000000, 2), ("c", 1705485600000, 1)]
    assert rows(after, ["id", "ts", "v"]) == want == rows(hudi_rs(str(tmp_path / "t")), ["id", "ts", "v"])
    assert _partition_of(t)["c"] == "2024/01/17/10"


def test_a_custom_key_generator_table_formats_its_timestamp_fields(tmp_path):
    """CustomKeyGenerator ('region:SIMPLE,ts:TIMESTAMP', as Hudi 1.x records it): each field by its type, joined by
    '/', hive style prefixing each field's part. (hudi-rs 0.5 reads no table whose partition fields carry types.)"""
    path = tmp_path / "t"
    HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="v", partition_by=["region", "ts"],
                     hive_style_partitioning=True, options={"hoodie.index.type": "SIMPLE"})
    props_path = path / ".hoodie" / "hoodie.properties"
    props = properties.loads(props_path.read_text())
    props.update({"hoodie.table.keygenerator.class": "org.apache.hudi.keygen.CustomKeyGenerator",
                  "hoodie.table.partition.fields": "region:simple,ts:timestamp", P + "timestamp.type": "UNIX_TIMESTAMP",
                  P + "output.dateformat": "yyyyMMdd", P + "timezone": "UTC"})
    props_path.write_text(properties.dumps(props, "a CustomKeyGenerator table"))
    t = HudiTable(str(path))
    t.write(pa.table({"id": [1, 2], "region": ["eu", "us"], "ts": pa.array([1705311000, 0], pa.int64()),
                      "v": [1, 1]}))
    assert _partition_of(t) == {1: "region=eu/ts=20240115", 2: "region=us/ts=19700101"}
    assert rows(t.to_arrow(), ["id", "region", "v"]) == [(1, "eu", 1), (2, "us", 1)]


def test_a_custom_key_generator_without_field_types_is_refused(reference_dir, tmp_path):
    path = tmp_path / "t"
    shutil.copytree(reference_dir / "cow_v6_simplekeygen_nonhivestyle", path)
    props_path = Path(path) / ".hoodie" / "hoodie.properties"
    props = properties.loads(props_path.read_text())
    props["hoodie.table.keygenerator.class"] = "org.apache.hudi.keygen.CustomKeyGenerator"
    props_path.write_text(properties.dumps(props, "untyped"))
    t = HudiTable(str(path))
    before = t.to_arrow()
    data = before.drop_columns([c for c in before.column_names if c.startswith("_hoodie")]).slice(0, 1)
    with pytest.raises(ConfigError, match="field:SIMPLE"):
        t.write(data)
    assert t.to_arrow().num_rows == before.num_rows


@pytest.mark.parametrize("name,writer", [
    ("cow_v9_timebasedkeygen_epochmillis", {}),
    ("cow_v6_timebasedkeygen_nonhivestyle", {P + "timestamp.type": "DATE_STRING"}),
])
def test_every_row_apache_hudi_wrote_is_in_the_path_we_would_make(reference_dir, name, writer):
    """Each base file row's _hoodie_partition_path is what our generator makes of its partition value with the
    table's settings (the writer's where its properties lack them)."""
    import pyarrow.parquet as pq

    t = HudiTable(str(reference_dir / name))
    field = t.config.partition_fields[0]
    timestamp = TimestampPartition.of({**t.config.raw, **writer})
    files = list((reference_dir / name).rglob("*.parquet"))
    assert files
    for f in files:
        if ".hoodie" in f.parts:
            continue
        data = pq.read_table(f, columns=[field, "_hoodie_partition_path"])
        if not data.num_rows:
            continue
        values = data[field]
        if timestamp.kind != "DATE_STRING" and pa.types.is_string(values.type):  # one file of the v9 table
            values = values.cast(pa.int64())  # holds the column as strings (Hudi's schema of an UPDATE)
        assert timestamp.values(values, field).to_pylist() == data["_hoodie_partition_path"].to_pylist(), f


def test_the_older_streamer_names_set_the_same_table(tmp_path):
    """hoodie.deltastreamer.keygen.timebased.* are TimestampKeyGeneratorConfig's alternatives: accepted, recorded in
    hoodie.properties under the current names; Hudi's own date-time parser named is harmless, another refused."""
    old = "hoodie.deltastreamer.keygen.timebased."
    options = {"hoodie.index.type": "SIMPLE", "hoodie.write.table.version": "9",
               "hoodie.datasource.write.keygenerator.class": "org.apache.hudi.keygen.TimestampBasedKeyGenerator",
               old + "timestamp.type": "EPOCHMILLISECONDS", old + "output.dateformat": HOUR, old + "timezone": "UTC",
               "hoodie.deltastreamer.keygen.datetime.parser.class": "org.apache.hudi.keygen.parser.HoodieDateTimeParser"}
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="v",
                         partition_by="ts", table_type="COPY_ON_WRITE", options=options)
    props = properties.loads((tmp_path / "t" / ".hoodie" / "hoodie.properties").read_text())
    assert props[P + "timestamp.type"] == "EPOCHMILLISECONDS" and props[P + "timezone"] == "UTC"
    assert not any(k.startswith(old) for k in props)
    t.write(pa.table({"id": ["a"], "ts": pa.array([1705311000000], pa.int64()), "v": [1]}))
    assert _partition_of(t) == {"a": "2024/01/15/09"}
    with pytest.raises(ConfigError, match="hoodie.keygen.datetime.parser.class='com.acme.Parser'"):
        HudiTable.create(str(tmp_path / "u"), table_name="u", record_key="id", partition_by="ts", options={
            **options, "hoodie.keygen.datetime.parser.class": "com.acme.Parser"})
    with pytest.raises(ConfigError, match="options .* set the same setting"):
        HudiTable.create(str(tmp_path / "v"), table_name="v", record_key="id", partition_by="ts", options={
            **options, P + "timezone": "Asia/Shanghai"})
