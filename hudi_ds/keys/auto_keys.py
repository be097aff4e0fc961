"""Record keys of tables without a record key, generated as Apache Hudi 0.14+ generates them (HUDI-5514).

Key = ``<instant>_<task>_<row>`` (Hudi's AutoRecordGenWrapperKeyGenerator, HoodieRecord.generateSequenceId):
the write's instant time, the Spark partition id of the writing task (0 for the Python API's single writer) and
the row's index among the rows that task received. Instants are unique per commit, partition ids per task of a
write, indexes per row of a task: keys are unique across the table, so rows are never merged and duplicates in
the data stay duplicates.

Bucket: Apache Hudi's bucket index hashes ``hoodie.bucket.index.hash.field``, which defaults to the record key
fields; a key-less table has none, so Hudi defines no bucket for generated keys. hudi_ds puts every row of one
task in one bucket, ``(instant + task) % buckets``: a function of the key (its first two fields), so a key still
maps to exactly one file group. Tasks of one write land in distinct buckets while there are no more tasks than
buckets, so an append writes one file per task and partition, and two concurrent single-task appends conflict
only when their instants pick the same bucket; more tasks share buckets (extra log files on merge-on-read, rows
merged into the bucket's one base file at commit on copy-on-write).
"""

from __future__ import annotations

import pyarrow as pa

from hudi_ds.schema.strings import numbered_strings


def auto_key_bucket(instant: str, task_id: int, num_buckets: int) -> int:
    """The bucket of every key task `task_id` generates in `instant`."""
    return (int(instant) + task_id) % num_buckets


def auto_keys(instant: str, task_id: int, first_row: int, n: int) -> pa.Array:
    """Keys of rows first_row .. first_row + n - 1 of one task (pa.string())."""
    return numbered_strings(f"{instant}_{task_id}_", first_row, n)


class AutoKeyGenerator:
    """One task's key generator: numbers its rows in input order across every chunk it is given."""

    def __init__(self, instant: str, task_id: int, num_buckets: int) -> None:
        self.instant = instant
        self.task_id = task_id
        self.bucket = auto_key_bucket(instant, task_id, num_buckets)
        self.next_row = 0

    def take(self, n: int) -> pa.Array:
        first, self.next_row = self.next_row, self.next_row + n
        return auto_keys(self.instant, self.task_id, first, n)
