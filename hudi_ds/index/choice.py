"""Which index a write finds file groups with: the one the table records, else the one the writer names, else
Apache Hudi's Spark default; and whether its base files carry bloom filters.

hudi-py records `hoodie.index.type` in the hoodie.properties of the tables it creates. Apache Hudi records none:
its index lives in each writer's config (`HoodieIndexConfig`, whose Spark default is SIMPLE), so such a table is
written with the index the user names, or SIMPLE.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from hudi_ds.config.table_config import TableConfig, key_generator_type_name
from hudi_ds.errors import TableExistsError, UnsupportedTableError

if TYPE_CHECKING:  # the option registry (pydantic) is not needed to check a table before a read (issue 32)
    from hudi_ds.config.options import HudiOptions

BUCKET = "BUCKET"
RECORD_INDEX = "RECORD_INDEX"  # finds keys in the metadata table's record_index (hudi_ds.index.record_index)
BLOOM_INDEXES = ("BLOOM", "GLOBAL_BLOOM")  # they find the same file groups as SIMPLE's, pruned by bloom filters
KEY_LOOKUP_INDEXES = ("SIMPLE", "GLOBAL_SIMPLE", *BLOOM_INDEXES)  # they read the keys the table holds
WRITTEN_INDEXES = (BUCKET, *KEY_LOOKUP_INDEXES, RECORD_INDEX)
HUDI_SPARK_DEFAULT = "SIMPLE"  # HoodieIndexConfig.getDefaultIndexType(EngineType.SPARK)
# key generators whose keys and partition paths hudi_ds builds exactly as Apache Hudi does (hudi_ds.keys)
_WRITTEN_KEY_GENERATORS = ("SIMPLE", "COMPLEX", "NON_PARTITION", "TIMESTAMP", "CUSTOM")


def recorded_index(config: TableConfig) -> str | None:
    """The index hoodie.properties names (a bucket count alone means the bucket index), None when it names none."""
    if config.num_buckets:
        return BUCKET
    return config.index_type.strip().upper() if config.index_type else None


def check_index_writable(config: TableConfig) -> None:
    """Refuse tables whose index or keys a write could not keep as Apache Hudi keeps them."""
    index = recorded_index(config)
    if index == BUCKET and not config.num_buckets:
        raise UnsupportedTableError(
            "hoodie.properties names the bucket index (hoodie.index.type=BUCKET) but no bucket count "
            "(hoodie.bucket.index.num.buckets): restore the count from .hoodie/hoodie.properties.backup")
    if index is not None and index not in WRITTEN_INDEXES:
        raise UnsupportedTableError(
            f"the table's hoodie.properties names the {index} index; hudi_ds writes with {', '.join(WRITTEN_INDEXES)} "
            "only. Read it, or write it with Apache Hudi")
    if not config.populate_meta_fields and config.is_mor:
        raise UnsupportedTableError(
            "the merge-on-read table was written with hoodie.populate.meta.fields=false (virtual keys): hudi_ds "
            "writes virtual keys on copy-on-write tables only, as hudi-rs reads such a merge-on-read table as "
            "append-only. Read it, or write it with Apache Hudi")
    if index == BUCKET:
        return  # hudi_ds made it: its keys are hudi_ds's
    kind = key_generator_type_name(config.key_generator) if config.key_generator else None
    if kind is not None and kind not in _WRITTEN_KEY_GENERATORS:
        raise UnsupportedTableError(
            f"the table's key generator {config.key_generator} makes keys or partition paths hudi_ds does not build "
            f"yet (it builds those of {', '.join(_WRITTEN_KEY_GENERATORS)}); read it, or write it with Apache Hudi")


def writes_bloom_filters(config: TableConfig, index: str | None = None) -> bool:
    """Whether new base files carry Hudi's bloom filter footer: with a bloom index (`index`, the one a write uses,
    or the one the table records), and in tables that record no index, which Apache Hudi wrote with bloom
    filters in every base file (a Hudi job may look them up with its BLOOM index, the default before 0.14).
    Tables hudi-py created with the bucket or a SIMPLE index skip them: hashing every key costs time."""
    if not config.populate_meta_fields:
        return False  # Apache Hudi's writers add no bloom filter without meta fields
    recorded = recorded_index(config)
    return (index or recorded) in BLOOM_INDEXES or recorded is None


def is_global(index: str) -> bool:
    return index.startswith("GLOBAL_") or index == RECORD_INDEX


def write_index(config: TableConfig, options: HudiOptions) -> str:
    """The index this write uses (BUCKET, RECORD_INDEX or one of KEY_LOOKUP_INDEXES)."""
    recorded = recorded_index(config)
    named = options.index_type if options.is_set("index_type") else None
    if recorded is not None and named is not None and named != recorded:
        raise TableExistsError(
            f"hoodie.index.type={named!r} contradicts the table, whose hoodie.properties records {recorded!r}; drop "
            "the option or set it to the recorded index (changing the index of a table moves no key)")
    index = recorded or named or HUDI_SPARK_DEFAULT
    if index == BUCKET and not config.num_buckets:
        raise UnsupportedTableError(
            "hoodie.index.type=BUCKET names the bucket index, but the table has no bucket count "
            "(hoodie.bucket.index.num.buckets is not in hoodie.properties) and its keys were not placed by one; "
            f"write it with {' or '.join(KEY_LOOKUP_INDEXES)}")
    return index
