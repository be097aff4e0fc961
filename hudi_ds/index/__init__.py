"""Record-to-file-group indexes; only the SIMPLE bucket index is implemented."""

from hudi_ds.index.bucket import (
    bucket_file_id_prefix,
    bucket_for_hash_values,
    bucket_for_record_key,
    bucket_ids,
    bucket_ids_for_table,
    bucket_ids_from_columns,
    bucket_of_file_id,
    hash_key_values,
    java_list_hash,
    java_string_hash,
    java_string_hashes,
    new_bucket_file_id,
)

__all__ = [
    "bucket_file_id_prefix",
    "bucket_for_hash_values",
    "bucket_for_record_key",
    "bucket_ids",
    "bucket_ids_for_table",
    "bucket_ids_from_columns",
    "bucket_of_file_id",
    "hash_key_values",
    "java_list_hash",
    "java_string_hash",
    "java_string_hashes",
    "new_bucket_file_id",
]
