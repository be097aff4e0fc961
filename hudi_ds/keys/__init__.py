"""Record keys and partition paths built exactly like Apache Hudi's key generators."""

from hudi_ds.keys.keygen import (
    EMPTY_PLACEHOLDER,
    NULL_PLACEHOLDER,
    java_string_forms,
    key_generator_class,
    key_generator_type,
    record_key_strings,
)
from hudi_ds.keys.partition_path import (
    DEFAULT_PARTITION,
    escape_path_name,
    parse_partition_path,
    partition_path_strings,
    partition_value_matches,
    unescape_path_name,
)

__all__ = [
    "DEFAULT_PARTITION",
    "EMPTY_PLACEHOLDER",
    "NULL_PLACEHOLDER",
    "escape_path_name",
    "java_string_forms",
    "key_generator_class",
    "key_generator_type",
    "parse_partition_path",
    "partition_path_strings",
    "partition_value_matches",
    "record_key_strings",
    "unescape_path_name",
]
