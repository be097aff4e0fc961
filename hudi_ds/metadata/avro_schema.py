"""The Avro schema of the metadata table's records (HoodieMetadataRecord), as Python data.

A format definition kept field for field as Apache Hudi's `hudi-common/src/main/avro/HoodieMetadata.avsc`
compiles, with the five `_hoodie_*` meta fields Hudi's writers put in front: the text of
`metadata_schema_json` is the exact string Hudi stores in every metadata HFile's file info (`schema`) and log
block header (SCHEMA). Two versions: Hudi 1.0 (table version 8) and Hudi 1.1 (table version 9), which adds the
ArrayWrapper union branch of column statistics values and their `valueType`; the tests check both against the
reference tables.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from hudi_ds.schema.meta import META_COLUMNS
from hudi_ds.timeline.avro_schemas import NO_DEFAULT, avro_field

Schema = dict[str, Any]
NAMESPACE = "org.apache.hudi.avro.model"
_STRING = {"type": "string", "avro.java.string": "String"}  # Java's compiled schemas mark String fields


def _field(name: str, type_: Any, doc: str | None = None, default: Any = NO_DEFAULT) -> dict[str, Any]:
    """One record field, its doc before its default (HoodieMetadata.avsc documents nearly every field)."""
    return avro_field(name, type_, default, doc)


def _record(name: str, fields: list[dict[str, Any]], doc: str | None = None) -> Schema:
    out: Schema = {"type": "record", "name": name}
    if doc is not None:
        out["doc"] = doc
    out["fields"] = fields
    return out


def _wrapper(name: str, value_type: Any, what: str) -> Schema:
    return _record(name, [_field("value", value_type)],
                   doc=f"A record wrapping {what} type to be able to be used it w/in Avro's Union")


_META_FIELDS = [_field(name, ["null", "string"], "", None) for name in META_COLUMNS]

FILE_INFO: Schema = _record("HoodieMetadataFileInfo", [
    _field("size", "long", "Size of the file"),
    _field("isDeleted", "boolean", "True if this file has been deleted"),
])

BLOOM_FILTER: Schema = _record("HoodieMetadataBloomFilter", [
    _field("type", _STRING, "Bloom filter type code"),
    _field("timestamp", _STRING, "Instant timestamp when this metadata was created/updated"),
    _field("bloomFilter", "bytes", "Bloom filter binary byte array"),
    _field("isDeleted", "boolean", "Bloom filter entry valid/deleted flag"),
], doc="Data file bloom filter details")

# Column statistics values: one wrapper record per type, in the union order Hudi writes (the union branch index is
# on disk, so the order is part of the format).
WRAPPERS: list[Schema] = [
    _wrapper("BooleanWrapper", "boolean", "boolean"),
    _wrapper("IntWrapper", "int", "int"),
    _wrapper("LongWrapper", "long", "long"),
    _wrapper("FloatWrapper", "float", "float"),
    _wrapper("DoubleWrapper", "double", "double"),
    _wrapper("BytesWrapper", "bytes", "bytes"),
    _wrapper("StringWrapper", _STRING, "string"),
    _wrapper("DateWrapper", "int", "Date logical"),
    _wrapper("DecimalWrapper", {"type": "bytes", "logicalType": "decimal", "precision": 30, "scale": 15},
             "Decimal logical"),
    _wrapper("TimeMicrosWrapper", {"type": "long", "logicalType": "time-micros"}, "Time-micros logical"),
    _wrapper("TimestampMicrosWrapper", "long", "Timestamp-micros logical"),
    _wrapper("LocalDateWrapper", "int", "Local Date"),
]
WRAPPER_NAMES = [w["name"] for w in WRAPPERS]
ARRAY_WRAPPER: Schema = _record("ArrayWrapper", [
    _field("wrappedValues", ["null", {"type": "array", "items": ["null", *WRAPPER_NAMES]}],
           "An array where each element is one of the supported wrapper types.", None),
], doc="A record containing a list of wrapped values.")

VALUE_TYPE_INFO: Schema = _record("HoodieValueTypeInfo", [
    _field("typeOrdinal", "int", "Enum type ordinal representing the value type"),
    _field("additionalInfo", ["null", _STRING], "Optional additional information about the value type", None),
])


def _column_stats(table_version: int) -> Schema:
    branches: list[Any] = [*WRAPPERS, ARRAY_WRAPPER] if table_version >= 9 else list(WRAPPERS)
    names = [*WRAPPER_NAMES, "ArrayWrapper"] if table_version >= 9 else WRAPPER_NAMES
    fields = [
        _field("fileName", ["null", _STRING], "File name for which this column statistics applies", None),
        _field("columnName", ["null", _STRING], "Column name for which this column statistics applies", None),
        _field("minValue", ["null", *branches], "Minimum value in the range. Based on user data table schema, "
               "we can convert this to appropriate type", None),
        _field("maxValue", ["null", *names], "Maximum value in the range. Based on user data table schema, we "
               "can convert it to appropriate type", None),
        _field("valueCount", ["null", "long"], "Total count of values", None),
        _field("nullCount", ["null", "long"], "Total count of null values", None),
        _field("totalSize", ["null", "long"], "Total storage size on disk", None),
        _field("totalUncompressedSize", ["null", "long"], "Total uncompressed storage size on disk", None),
        _field("isDeleted", "boolean", "Column range entry valid/deleted flag"),
        _field("isTightBound", "boolean", "Whether the min/max range of a column is tight bound or not", False),
    ]
    if table_version >= 9:
        fields.append(_field("valueType", ["null", VALUE_TYPE_INFO], "Value type information containing enum "
                             "ordinal and optional additional information", None))
    return _record("HoodieMetadataColumnStats", fields, doc="Data file column statistics")


_UUID_PIECES = ("A UUID based fileId is stored as 3 pieces in RLI (fileIdHighBits, fileIdLowBits and fileIndex). "
                "\nFileID format is {UUID}-{fileIndex}.")

RECORD_INDEX_INFO: Schema = _record("HoodieRecordIndexInfo", [
    _field("partitionName", ["null", _STRING], "Refers to the partition name the record belongs to", None),
    _field("fileIdHighBits", ["null", "long"],
           f"Refers to high 64 bits if the fileId is based on UUID format. \n{_UUID_PIECES}", None),
    _field("fileIdLowBits", ["null", "long"],
           f"Refers to low 64 bits if the fileId is based on UUID format. \n{_UUID_PIECES}", None),
    _field("fileIndex", ["null", "int"], "Index representing file index which is used to re-construct UUID based "
           f"fileID. Applicable when the fileId is based on UUID format. \n{_UUID_PIECES}", None),
    _field("fileId", ["null", _STRING], "Represents fileId of the location where record belongs to. When the "
           "encoding is 1, fileID is stored in raw string format.", None),
    _field("instantTime", ["null", "long"],
           "Epoch time in millisecond representing the commit time at which record was added", None),
    _field("fileIdEncoding", "int", "Represents fileId encoding. Possible values are 0 and 1. O represents UUID "
           "based fileID, and 1 represents raw string format of the fileId. \nWhen the encoding is 0, reader can "
           "deduce fileID from fileIdLowBits, fileIdHighBits and fileIndex.", 0),
    _field("position", ["null", "long"], "Represents position of record within a file group for easier access. "
           "It will be used for index lookup.", None),
])

SECONDARY_INDEX_INFO: Schema = _record("HoodieSecondaryIndexInfo", [
    _field("isDeleted", "boolean", "True if this entry has been deleted"),
])


@functools.cache
def _schema_json(table_version: int) -> str:
    schema: Schema = {"type": "record", "name": "HoodieMetadataRecord", "namespace": NAMESPACE,
                      "doc": "A record saved within the Metadata Table", "fields": [
        *_META_FIELDS,
        _field("key", _STRING),
        _field("type", "int", "Type of the metadata record"),
        _field("filesystemMetadata", ["null", {"type": "map", "values": FILE_INFO, "avro.java.string": "String"}],
               "Contains information about partitions and files within the dataset"),
        _field("BloomFilterMetadata", ["null", BLOOM_FILTER],
               "Metadata Index of bloom filters for all data files in the user table", None),
        _field("ColumnStatsMetadata", ["null", _column_stats(table_version)],
               "Metadata Index of column statistics for all data files in the user table", None),
        _field("recordIndexMetadata", ["null", RECORD_INDEX_INFO],
               "Metadata Index that contains information about record keys and their location in the dataset",
               None),
        _field("SecondaryIndexMetadata", ["null", SECONDARY_INDEX_INFO], "Metadata Index that contains "
               "information about secondary keys and the corresponding record keys in the dataset", None),
    ]}
    return json.dumps(schema, separators=(",", ":"), ensure_ascii=False)


def metadata_schema_json(table_version: int) -> str:
    """The HoodieMetadataRecord schema text Hudi writes for a data table of `table_version` (8 or 9)."""
    if table_version not in (8, 9):
        raise ValueError(f"the metadata table schema is defined for table versions 8 and 9, not {table_version}")
    return _schema_json(table_version)


def metadata_schema(table_version: int) -> Schema:
    """`metadata_schema_json` as a dict (a fresh copy the caller may change)."""
    parsed: Schema = json.loads(metadata_schema_json(table_version))
    return parsed
