"""The options of a table's shape: name, keys, partitioning, type, version, index, key generator, change data
and meta fields; used when the first write creates the table and checked against an existing one."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import field_validator

from hudi_ds.config.hudi_features import UNWRITTEN_INDEXES
from hudi_ds.config.option_field import OptionGroup, opt, upper_name
from hudi_ds.config.table_config import LEGACY_CDC_MODES, TableType, key_generator_type_name

# the timestamp key generator's settings under their older names (TimestampKeyGeneratorConfig's alternatives)
_STREAMER = "hoodie.deltastreamer.keygen.timebased."

CdcMode = Literal["OP_KEY_ONLY", "DATA_BEFORE", "DATA_BEFORE_AFTER"]
WriteIndex = Literal["BUCKET", "SIMPLE", "GLOBAL_SIMPLE", "BLOOM", "GLOBAL_BLOOM", "RECORD_INDEX"]


class TableOptions(OptionGroup):
    path: str | None = opt("path", None, "Table base path; set by save(path) / load(path).", scope="table")
    table_name: str | None = opt(
        "hoodie.table.name", None,
        "Table name stored in hoodie.properties; defaults to the last path segment (non-alphanumerics as '_').",
        "table.name", "hoodie.datasource.write.table.name", scope="table")
    record_key: list[str] = opt(
        "hoodie.datasource.write.recordkey.field", [],
        "Record key column(s), comma-separated. Without one the first write creates a table without a record key: "
        "append-only, every row gets a generated key (<instant>_<task>_<row>, as Apache Hudi 0.14+ does).",
        "hoodie.table.recordkey.fields", scope="table")
    ordering_field: str | None = opt(
        "hoodie.datasource.write.precombine.field", None,
        "Ordering (precombine / event-time) column: per key the highest value wins. Optional.",
        "precombine.field", "write.precombine.field", "hoodie.table.precombine.field",
        "hoodie.table.ordering.fields", "hoodie.datasource.write.ordering.fields", "hoodie.payload.ordering.field",
        scope="table")
    partition_fields: list[str] = opt(
        "hoodie.datasource.write.partitionpath.field", [],
        "Partition column(s), comma-separated; empty for a non-partitioned table.",
        "hoodie.table.partition.fields", scope="table")
    table_type: TableType = opt(
        "hoodie.datasource.write.table.type", "MERGE_ON_READ",
        "MERGE_ON_READ (updates go to log files) or COPY_ON_WRITE (updates rewrite base files); MOR/COW accepted.",
        "table.type", "hoodie.table.type", "hoodie.datasource.write.storage.type", scope="table")
    table_version: Literal[6, 8, 9] = opt(
        "hoodie.write.table.version", 6,
        "Table version of a new table (6: read by every engine; 8: Apache Hudi 1.0; 9: Hudi 1.1/1.2, what Hudi 1.x "
        "writes). An existing table is written at its own version; a higher one upgrades it when "
        "hoodie.write.auto.upgrade is true (docs/compatibility.md).", scope="table")
    auto_upgrade: bool = opt(
        "hoodie.write.auto.upgrade", True,
        "Upgrade an older table to hoodie.write.table.version before writing (as Apache Hudi's writers do); false "
        "keeps the table at its version.")
    index_type: WriteIndex = opt(
        "hoodie.index.type", "BUCKET", "How writes find a key's file group: BUCKET (hash; the default of new tables), "
        "SIMPLE / BLOOM (read the keys of the partitions written; BLOOM only of files whose key range and bloom filter "
        "may hold a written key), GLOBAL_SIMPLE / GLOBAL_BLOOM (of all partitions), "
        "RECORD_INDEX (global: finds keys in the metadata table's record index, which it turns on). "
        "Tables that record none (Apache Hudi's) default to SIMPLE (docs/compatibility.md#indexes).", "index.type",
        scope="table")
    bucket_engine: Literal["SIMPLE"] = opt(
        "hoodie.index.bucket.engine", "SIMPLE", "Bucket index engine; only SIMPLE.", "hoodie.bucket.index.engine", scope="table")
    num_buckets: int = opt(
        "hoodie.bucket.index.num.buckets", 4, "Buckets (file groups) per partition; fixed when the table is created.",
        "bucket.index.num.buckets", scope="table")
    hive_style: bool = opt(
        "hoodie.datasource.write.hive_style_partitioning", False, "Partition folders as col=value.",
        "hive_style_partitioning", scope="table")
    url_encode: bool = opt(
        "hoodie.datasource.write.partitionpath.urlencode", False, "URL-encode partition values in paths.", scope="table")
    keygen_class: str | None = opt(
        "hoodie.datasource.write.keygenerator.class", None,
        "TimestampBasedKeyGenerator makes a table's partition paths from a timestamp (hoodie.keygen.timebased.*); "
        "Simple, Complex and NonPartitioned are accepted for compatibility (the table infers one of them).",
        "hoodie.table.keygenerator.class", "hoodie.datasource.write.keygenerator.type", scope="table")
    timestamp_type: str | None = opt(
        "hoodie.keygen.timebased.timestamp.type", None,
        "Timestamp-based partitions (TimestampBasedKeyGenerator, CustomKeyGenerator's TIMESTAMP fields): what the "
        "partition value is: UNIX_TIMESTAMP (seconds), EPOCHMILLISECONDS, EPOCHMICROSECONDS, SCALAR (of "
        "hoodie.keygen.timebased.timestamp.scalar.time.unit) or DATE_STRING (parsed with the input date format). "
        "Taken from hoodie.properties when it holds it (docs/compatibility.md#key-generators).",
        _STREAMER + "timestamp.type", scope="table")
    timestamp_scalar_unit: str | None = opt(
        "hoodie.keygen.timebased.timestamp.scalar.time.unit", None,
        "SCALAR timestamp partitions: the java.util.concurrent.TimeUnit of the values (default SECONDS).",
        _STREAMER + "timestamp.scalar.time.unit", scope="table")
    timestamp_input_format: str | None = opt(
        "hoodie.keygen.timebased.input.dateformat", None,
        "DATE_STRING timestamp partitions: the Joda pattern(s) of the input strings, separated by the delimiter.",
        _STREAMER + "input.dateformat", scope="table")
    timestamp_input_delimiter: str | None = opt(
        "hoodie.keygen.timebased.input.dateformat.list.delimiter.regex", None,
        "DATE_STRING timestamp partitions: the regex between input patterns (default ',').",
        _STREAMER + "input.dateformat.list.delimiter.regex", scope="table")
    timestamp_output_format: str | None = opt(
        "hoodie.keygen.timebased.output.dateformat", None,
        "Timestamp partitions: the Joda pattern of the partition path, e.g. yyyy/MM/dd (numeric fields y, M, d, H, "
        "m, s, S and literal text).", _STREAMER + "output.dateformat", scope="table")
    timestamp_timezone: str | None = opt(
        "hoodie.keygen.timebased.timezone", None,
        "Timestamp partitions: the time zone of input and output (overrides the two below).",
        _STREAMER + "timezone", scope="table")
    timestamp_input_timezone: str | None = opt(
        "hoodie.keygen.timebased.input.timezone", None,
        "Timestamp partitions: the zone of DATE_STRING values without an offset.",
        _STREAMER + "input.timezone", scope="table")
    timestamp_output_timezone: str | None = opt(
        "hoodie.keygen.timebased.output.timezone", None,
        "Timestamp partitions: the zone paths are formatted in (unset: the value's own zone for DATE_STRING, UTC "
        "for numbers, where Apache Hudi takes the JVM's default).", _STREAMER + "output.timezone", scope="table")
    cdc_enabled: bool = opt(
        "hoodie.table.cdc.enabled", False,
        "Persist change data at write time (Apache Hudi's RFC-51): every commit that updates or deletes rows of an "
        "existing file group writes a -cdc log file beside it, and the change feed reads those instead of "
        "comparing file slices. Fixed when the table is created.", "cdc.enabled", scope="table")
    cdc_mode: CdcMode = opt(
        "hoodie.table.cdc.supplemental.logging.mode", "DATA_BEFORE_AFTER",
        "What the change data holds: OP_KEY_ONLY (operation and record key), DATA_BEFORE (also the before-image) or "
        "DATA_BEFORE_AFTER (before- and after-images: the change feed needs no other file). Fixed when the table "
        "is created.", "cdc.supplemental.logging.mode", scope="table")
    populate_meta_fields: bool = opt(
        "hoodie.populate.meta.fields", True,
        "Fill the five _hoodie_* meta columns of base files. false (virtual keys, COPY_ON_WRITE only): base files "
        "leave them null but _hoodie_file_name, as Apache Hudi writes them, so a load writes less; keys are "
        "computed from the record key columns, and incremental reads and the change feed see a file's rows as "
        "written by the commit that wrote the file (docs/compatibility.md#virtual-keys). Fixed when the table is "
        "created.", scope="table")

    @field_validator("record_key", "partition_fields", mode="before")
    @classmethod
    def _split_names(cls, v: Any) -> Any:
        if isinstance(v, str):
            return [p.strip() for p in v.split(",") if p.strip()]
        return v

    @field_validator("ordering_field", mode="before")
    @classmethod
    def _one_ordering(cls, v: Any) -> Any:
        if isinstance(v, str):
            names = [p.strip() for p in v.split(",") if p.strip()]
            if len(names) > 1:
                raise ValueError(f"one ordering field only, got {names}")
            return names[0] if names else None
        return v

    @field_validator("table_type", mode="before")
    @classmethod
    def _table_type(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().upper()
            return {"MOR": "MERGE_ON_READ", "COW": "COPY_ON_WRITE"}.get(v, v)
        return v

    @field_validator("table_version", mode="before")
    @classmethod
    def _table_version(cls, v: Any) -> Any:
        if isinstance(v, str) and v.strip().isdigit():
            return int(v.strip())
        return v

    @field_validator("index_type", "bucket_engine", mode="before")
    @classmethod
    def _upper(cls, v: Any) -> Any:
        """Upper case; an index hudi-py does not write with is refused with the reason."""
        v = upper_name(v)
        if v in UNWRITTEN_INDEXES:
            raise ValueError(f"hudi-py does not write with the {v} index: {UNWRITTEN_INDEXES[v]}")
        return v

    @field_validator("num_buckets", mode="before")
    @classmethod
    def _buckets(cls, v: Any) -> Any:
        """The one check of the bucket count, whichever way it is given (a bool is not a count)."""
        if isinstance(v, str) and v.strip().lstrip("+").isdigit():
            v = int(v)
        if isinstance(v, bool) or not isinstance(v, int) or not 1 <= v <= 99_999_999:
            raise ValueError("the bucket count must be an integer between 1 and 99999999")
        return v

    @field_validator("cdc_mode", mode="before")
    @classmethod
    def _cdc_mode(cls, v: Any) -> Any:
        if isinstance(v, str):
            v = v.strip().upper()
            return LEGACY_CDC_MODES.get(v, v)
        return v

    @field_validator("keygen_class")
    @classmethod
    def _keygen(cls, v: str | None) -> str | None:
        if v and key_generator_type_name(v) not in ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP"):
            raise ValueError(f"{v!r} is not one of Apache Hudi's key generators hudi-py creates tables with: "
                             "org.apache.hudi.keygen.SimpleKeyGenerator, ComplexKeyGenerator, NonpartitionedKeyGenerator "
                             "and TimestampBasedKeyGenerator (or their types SIMPLE, COMPLEX, NON_PARTITION, TIMESTAMP; "
                             "it writes into CustomKeyGenerator tables Apache Hudi made)")
        return v

    @field_validator("table_name")
    @classmethod
    def _table_name(cls, v: str | None) -> str | None:
        if v is not None and (not v or not v.replace("_", "a").isalnum()):
            raise ValueError("a table name is letters, digits and underscores")
        return v
