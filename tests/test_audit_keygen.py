"""Audit of key generators against Apache Hudi's (issue 28): what Hudi's KeyGenUtils, ComplexAvroKeyGenerator,
TimestampBasedAvroKeyGenerator and PartitionPathEncodeUtils make of awkward values, and tables written with them
that our reader, partition pruning and hudi-rs read alike."""

from __future__ import annotations

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
