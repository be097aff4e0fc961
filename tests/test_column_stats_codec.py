"""The fast Avro codec of column_stats / partition_stats records (hudi_ds.metadata.column_stats_codec): the bytes
fastavro writes and the records AvroHFileReader reads, for any record of their shape; other shapes left to
fastavro."""

from __future__ import annotations

import functools
import math

from hypothesis import given, settings
from hypothesis import strategies as st

from hudi_ds.hfile import AvroHFileReader
from hudi_ds.metadata import column_stats_codec as codec
from hudi_ds.metadata import records as md
from hudi_ds.metadata.avro_schema import NAMESPACE
from hudi_ds.metadata.column_stats_sync import stats_record, tombstones
from hudi_ds.metadata.hfiles import encode_base_file

INT32 = st.integers(min_value=-2**31, max_value=2**31 - 1)
INT64 = st.integers(min_value=-2**63, max_value=2**63 - 1)
WRAPPED = {
    "BooleanWrapper": st.booleans(), "IntWrapper": INT32, "LongWrapper": INT64,
    "FloatWrapper": st.floats(width=32, allow_nan=False), "DoubleWrapper": st.floats(allow_nan=False),
    "BytesWrapper": st.binary(max_size=9), "StringWrapper": st.text(max_size=6), "DateWrapper": INT32,
    "TimestampMicrosWrapper": INT64, "LocalDateWrapper": INT32,
}


@st.composite
def bounds(draw: st.DrawFn) -> tuple[str, dict] | None:
    wrapper = draw(st.sampled_from(sorted(WRAPPED)))
    return draw(st.one_of(st.none(), WRAPPED[wrapper].map(lambda v: (f"{NAMESPACE}.{wrapper}", {"value": v}))))


@st.composite
def stats_records(draw: st.DrawFn, version: int) -> dict:
    counts = st.one_of(st.none(), st.integers(min_value=0, max_value=2**62))
    stats = {"fileName": draw(st.one_of(st.none(), st.text(max_size=8))),
             "columnName": draw(st.one_of(st.none(), st.text(max_size=8))),
             "minValue": draw(bounds()), "maxValue": draw(bounds()),
             "valueCount": draw(counts), "nullCount": draw(counts), "totalSize": draw(counts),
             "totalUncompressedSize": draw(counts), "isDeleted": draw(st.booleans()),
             "isTightBound": draw(st.booleans()),
             "valueType": draw(st.one_of(st.none(), st.fixed_dictionaries({
                 "typeOrdinal": INT32, "additionalInfo": st.one_of(st.none(), st.text(max_size=4))})))}
    kind = draw(st.sampled_from([md.RecordType.COLUMN_STATS, md.RecordType.PARTITION_STATS]))
    key = draw(st.text(min_size=1, max_size=12))
    return stats_record(key, kind, stats, version)


def same(a: object, b: object) -> bool:
    """Equality with -0.0 told from 0.0 (their bytes differ)."""
    if isinstance(a, float) and isinstance(b, float):
        return math.copysign(1, a) == math.copysign(1, b) and a == b
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    if isinstance(a, (tuple, list)) and isinstance(b, (tuple, list)):
        return type(a) is type(b) and len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    return type(a) is type(b) and a == b


@settings(max_examples=200, deadline=None)
@given(st.sampled_from([8, 9]).flatmap(lambda v: st.tuples(st.just(v), st.lists(stats_records(v), min_size=1,
                                                                                 max_size=6))))
def test_the_codec_writes_fastavros_bytes_and_reads_its_records(case):
    version, cases = case
    records = {r["key"]: r for r in cases}
    with_fastavro = encode_base_file(records, version, created_ms=1)
    fast = functools.partial(codec.encode, version=version)
    assert encode_base_file(records, version, created_ms=1, encoder=fast) == with_fastavro
    assert all(fast({**r, "key": ""}) is not None for r in records.values())  # none left to fastavro
    read = dict(AvroHFileReader(with_fastavro, "f"))
    fast_read = dict(AvroHFileReader(with_fastavro, "f", decoder=functools.partial(codec.decode, version=version)))
    assert same(fast_read, read)
    assert all(same(read[k]["ColumnStatsMetadata"], r["ColumnStatsMetadata"]) for k, r in records.items())


def test_other_shapes_are_left_to_fastavro():
    [tombstone] = tombstones("p", "f.parquet", ["c"], 9).values()
    assert codec.encode({**tombstone, "key": ""}, 9) is not None
    decimal = {**tombstone["ColumnStatsMetadata"], "minValue": (f"{NAMESPACE}.DecimalWrapper", {"value": 1})}
    for other in ({**tombstone, "ColumnStatsMetadata": decimal}, {**tombstone, "type": md.RecordType.FILE_LIST},
                  {**tombstone, "_hoodie_record_key": "k"}, {**tombstone, "key": "k"}):
        assert codec.encode(other, 9) is None
    assert codec.decode(b"\x00" * 6 + b"\x04", "k", 9) is None  # a files record
    assert codec.decode(b"\x01", "k", 9) is None
