"""Audit of key generators against Apache Hudi's (issue 28): what Hudi's KeyGenUtils, ComplexAvroKeyGenerator,
TimestampBasedAvroKeyGenerator and PartitionPathEncodeUtils make of awkward values, and tables written with them
that our reader, partition pruning and hudi-rs read alike."""

from __future__ import annotations

import decimal

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable, InvalidDataError
from hudi_ds.keys import DEFAULT_PARTITION
from hudi_ds.keys.timestamp_partition import TimestampPartition

P = "hoodie.keygen.timebased."
PART = "_hoodie_partition_path"


@pytest.mark.parametrize("settings,want", [
    # TimestampBasedAvroKeyGenerator.getDefaultPartitionVal: a null DATE_STRING is new DateTime(1L, input zone, else
    # output zone, else GMT) printed with the first input pattern, then parsed and formatted as any value
    ({"input.dateformat": "yyyy-MM-dd", "timezone": "Asia/Shanghai"}, "1970/01/01/00"),  # "1970-01-01" at +08:00
    ({"input.dateformat": "yyyy-MM-dd HH", "input.timezone": "GMT-05:00", "output.timezone": "UTC"},
     "1970/01/01/00"),  # "1969-12-31 19" at -05:00 is midnight UTC
    ({"input.dateformat": "yyyy-MM-dd,yyyyMMdd HH", "output.timezone": "GMT+02:00"},
     "1970/01/01/02"),  # printed at +02:00 ("1970-01-01"), parsed in the JVM's zone (UTC here)
    # the reference table cow_v6_timebasedkeygen_nonhivestyle's settings: "1970-01-01T00:00:00.001+0000"
    ({"input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZ"}, "1970/01/01/00"),
    ({"input.dateformat": "yyyy-MM-dd'T'HH:mm:ss.SSSZZ", "input.timezone": "Asia/Kolkata", "output.timezone": "UTC"},
     "1970/01/01/00"),
])
def test_a_null_date_string_is_the_default_hudi_prints_and_parses(settings, want):
    full = {P + "timestamp.type": "DATE_STRING", P + "output.dateformat": "yyyy/MM/dd/HH",
            **{P + k: v for k, v in settings.items()}}
    assert TimestampPartition.of(full).values(pa.array([None], pa.string()), "ts").to_pylist() == [want]


def test_a_null_date_string_keeps_the_millisecond_only_where_the_input_pattern_does():
    coarse = {P + "timestamp.type": "DATE_STRING", P + "input.dateformat": "yyyy-MM-dd HH:mm:ss",
              P + "output.dateformat": "yyyyMMddHHmmssSSS", P + "timezone": "UTC"}
    fine = {**coarse, P + "input.dateformat": "yyyy-MM-dd HH:mm:ss.SSS"}
    values = pa.array([None], pa.string())
    assert TimestampPartition.of(coarse).values(values, "ts").to_pylist() == ["19700101000000000"]
    assert TimestampPartition.of(fine).values(values, "ts").to_pylist() == ["19700101000000001"]


# ---- partition values Hudi escapes or sends to its default partition --------------------------------------------

AWKWARD = ["a/b", "x=y", "sp ace", "ü€", None, "", "50%", "ab:c", "#?*", "{[]^}", "'\"", DEFAULT_PARTITION, "default"]


@pytest.mark.parametrize("hive_style", [False, True])
@pytest.mark.parametrize("url_encode", [False, True])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_BLOOM"])
def test_awkward_partition_values_are_written_pruned_and_updated_where_hudi_puts_them(tmp_path, hive_style,
                                                                                      url_encode, index):
    values = [v for v in AWKWARD if url_encode or v is None or "/" not in v]
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="MERGE_ON_READ", options={
                             "hoodie.index.type": index, "hoodie.datasource.write.partitionpath.urlencode": url_encode,
                             "hoodie.datasource.write.hive_style_partitioning": hive_style})
    ids = [f"k{i}" for i in range(len(values))]
    t.write(pa.table({"id": ids, "ts": [1] * len(ids), "dt": values}))
    t.write(pa.table({"id": ids, "ts": [2] * len(ids), "dt": values}))  # updates, found in those partitions
    t.write(pa.table({"id": ids[:2], "ts": [3, 3], "dt": values[:2]}), operation="delete")
    read = t.to_arrow(columns=["id", "dt", "ts", PART])
    # KeyGenUtils: a null or empty value is __HIVE_DEFAULT_PARTITION__; else escapePathName's %XX when url-encoding
    escape = {"/": "%2F", "=": "%3D", "%": "%25", ":": "%3A", "#": "%23", "?": "%3F", "*": "%2A", "{": "%7B",
              "[": "%5B", "]": "%5D", "^": "%5E", "'": "%27", '"': "%22"}
    text = [DEFAULT_PARTITION if not v else "".join(escape.get(c, c) for c in v) if url_encode else v for v in values]
    want = sorted([(i, v, 2, f"dt={p}" if hive_style else p) for i, v, p in zip(ids, values, text, strict=True)][2:],
                  key=repr)
    assert rows(read, ["id", "dt", "ts", PART]) == want
    assert rows(hudi_rs(str(tmp_path / "t")), ["id", "dt", "ts", PART]) == want
    for i, v in zip(ids[2:], values[2:], strict=True):
        if v is not None:  # pruning by the path's value keeps the row's partition
            assert t.to_arrow(filters=[("dt", "=", v)], columns=["id"])["id"].to_pylist() == [i], v


@pytest.mark.parametrize("kind,value", [("EPOCHMILLISECONDS", 2**62), ("EPOCHMILLISECONDS", 253402300800000),
                                        ("UNIX_TIMESTAMP", -62135596801), ("DATE_STRING", "99999-01-01")])
def test_an_instant_beyond_the_years_python_formats_is_refused_by_name(tmp_path, kind, value):
    """Joda formats years past 9999; hudi_ds cannot, so such a value is bad input, refused before a file is
    written (it was an OverflowError)."""
    settings = {P + "timestamp.type": kind, P + "output.dateformat": "yyyy/MM/dd", P + "timezone": "UTC",
                P + "input.dateformat": "yyyy-MM-dd"}
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", partition_by="ts", options={
        "hoodie.index.type": "SIMPLE", "hoodie.datasource.write.keygenerator.class":
            "org.apache.hudi.keygen.TimestampBasedKeyGenerator", **settings})
    good = 0 if kind != "DATE_STRING" else "2024-01-15"
    column = pa.array([good, value], pa.string() if kind == "DATE_STRING" else pa.int64())
    with pytest.raises(InvalidDataError, match=f"{value}.*(outside the years 1 to 9999|no valid date)"):
        t.write(pa.table({"id": ["a", "b"], "ts": column}))
    assert not [p for p in (tmp_path / "t").rglob("*.parquet")]
    t.write(pa.table({"id": ["a"], "ts": column.slice(0, 1)}))
    assert t.to_arrow(columns=["id"])["id"].to_pylist() == ["a"]


# ---- complex keys ---------------------------------------------------------------------------------------------

@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@pytest.mark.parametrize("index", ["SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX"])
def test_complex_keys_with_separators_nulls_and_empties_are_updated_and_deleted(tmp_path, table_type, index):
    """KeyGenUtils.getRecordKey: `f:v` parts joined by ',' with no escaping, __null__ / __empty__ for null and ''
    parts; a lookup index finds each such key again (updates, deletes) in partitions of several fields."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key=["k1", "k2"], ordering_field="ts",
                         partition_by=["p1", "p2"], table_type=table_type, hive_style_partitioning=True,
                         options={"hoodie.index.type": index, "hoodie.write.table.version": 9})
    k1 = ["a,b", "a", None, "", "x:y", "é", "a", "a,k2:b"]
    k2 = ["c", "b,c", "z", "z", None, "", "b", None]
    p1 = [None, "", "u", "u", "v", "v", "w", "w"]
    p2 = pa.array([1, None, 2, 2, None, 3, 4, 4], pa.int32())
    n = len(k1)
    for ts in (1, 2):
        t.write(pa.table({"k1": k1, "k2": k2, "ts": [ts] * n, "p1": p1, "p2": p2, "v": [f"{ts}.{i}" for i in range(n)]}))
    t.write(pa.table({"k1": k1[1:3], "k2": k2[1:3], "ts": [3, 3], "p1": p1[1:3], "p2": p2[1:3]}), operation="delete")
    keys = ["k1:a,b,k2:c", "k1:a,k2:b,c", "k1:__null__,k2:z", "k1:__empty__,k2:z", "k1:x:y,k2:__null__",
            "k1:é,k2:__empty__", "k1:a,k2:b", "k1:a,k2:b,k2:__null__"]
    parts = ["p1=__HIVE_DEFAULT_PARTITION__/p2=1", "p1=__HIVE_DEFAULT_PARTITION__/p2=__HIVE_DEFAULT_PARTITION__",
             "p1=u/p2=2", "p1=u/p2=2", "p1=v/p2=__HIVE_DEFAULT_PARTITION__", "p1=v/p2=3", "p1=w/p2=4", "p1=w/p2=4"]
    columns = ["k1", "k2", "v", "_hoodie_record_key", PART]
    want = sorted(((k1[i], k2[i], f"2.{i}", keys[i], parts[i]) for i in range(n) if i not in (1, 2)), key=repr)
    assert rows(t.to_arrow(columns=columns), columns) == want
    assert rows(hudi_rs(str(tmp_path / "t")), columns) == want


def test_decimal_instants_lose_their_fraction_as_javas_long_value_does():
    """TimestampBasedAvroKeyGenerator takes a BigDecimal's longValue(), towards zero (a pyarrow error before)."""
    settings = {P + "timestamp.type": "UNIX_TIMESTAMP", P + "output.dateformat": "yyyy/MM/dd/HH:mm:ss",
                P + "timezone": "UTC"}
    values = pa.array([decimal.Decimal("1705311000.9"), decimal.Decimal("-1.5"), None], pa.decimal128(12, 1))
    assert TimestampPartition.of(settings).values(values, "ts").to_pylist() == [
        "2024/01/15/09:30:00", "1969/12/31/23:59:59", "1970/01/01/00:00:01"]


def test_an_empty_time_zone_setting_is_no_zone():
    """HoodieDateTimeParser: a present but empty hoodie.keygen.timebased.timezone gives no zone (not GMT), so a
    DATE_STRING is formatted in the offset it carries, and the input/output zones are not consulted."""
    settings = {P + "timestamp.type": "DATE_STRING", P + "input.dateformat": "yyyy-MM-dd'T'HH:mm:ssZ",
                P + "output.dateformat": "yyyy/MM/dd/HH", P + "timezone": "", P + "output.timezone": "UTC"}
    values = pa.array(["2024-01-15T23:30:00+0200"])
    assert TimestampPartition.of(settings).values(values, "ts").to_pylist() == ["2024/01/15/23"]
