"""Audit of key generators against Apache Hudi's (issue 28): what Hudi's KeyGenUtils, ComplexAvroKeyGenerator,
TimestampBasedAvroKeyGenerator and PartitionPathEncodeUtils make of awkward values, and tables written with them
that our reader, partition pruning and hudi-rs read alike."""

from __future__ import annotations

import pyarrow as pa
import pytest

from hudi_ds.keys.timestamp_partition import TimestampPartition

P = "hoodie.keygen.timebased."


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

