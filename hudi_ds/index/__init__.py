"""Record-to-file-group indexes: the bucket index (`bucket`), the key lookup of the SIMPLE indexes (`lookup`),
and which one a write uses (`choice`)."""

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
