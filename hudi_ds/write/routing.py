"""Routing input rows: record key, partition path and bucket per row; de-duplication per key."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config import TableConfig
from hudi_ds.errors import SchemaError
from hudi_ds.index.bucket import bucket_ids_for_table, integer_keyed
from hudi_ds.index.lookup import PENDING
from hudi_ds.keys.auto_keys import AutoKeyGenerator
from hudi_ds.keys.keygen import record_key_strings
from hudi_ds.keys.matching import all_distinct
from hudi_ds.keys.partition_path import partition_paths
from hudi_ds.keys.partition_scheme import timestamp_partitions
from hudi_ds.schema.meta import PARTITION_PATH, RECORD_KEY
from hudi_ds.write.input import split_given

BUCKET = "__bucket"
DELETE = "__delete"


def require_columns(table: pa.Table, config: TableConfig, operation: str, ordering: bool = True) -> None:
    """The key, partition and (unless `ordering` is False) ordering columns an operation needs."""
    needed = [("record key", c) for c in config.record_key_fields]
    needed += [("partition", c) for c in config.partition_fields]
    merge_ordering = config.merge_ordering_field()
    if merge_ordering and ordering:
        needed.append(("ordering (precombine)", merge_ordering))
    for role, col in needed:
        if col not in table.column_names:
            raise SchemaError(
                f"{operation}: the {role} column {col!r} is missing from the data; "
                f"add it (the table was created with {role} field {col!r}); columns given: {table.column_names}"
            )


def route(table: pa.Table, config: TableConfig, auto_keys: AutoKeyGenerator | None = None,
          prefixed_key: bool = False, key_column: bool = True) -> pa.Table:
    """The table with record key, partition path (a dictionary of distinct paths) and bucket columns appended; a
    table without a record key takes its keys (and their bucket) from the task's `auto_keys`. Without a bucket index the bucket column
    says PENDING: tagging (hudi_ds.write.tagging) finds each row's file group later. `prefixed_key`: a one-field
    key is written `field:value` (hudi_ds.keys.keygen.record_key_strings). Without `key_column` the keys only
    place the rows in buckets, and are not built without a bucket index nor for a key of one integer field (each
    file group's writer builds them again if it needs them, cheaper than gathering a column of strings through the
    split)."""
    table, given = split_given(table)
    partitions = partition_paths(given, config.partition_fields, config.hive_style, config.url_encode,
                                 timestamp_partitions(config))
    fields = config.record_key_fields
    if auto_keys is not None:
        keys = auto_keys.take(table.num_rows)
    elif not key_column and not config.num_buckets:
        keys = None  # placed later by tagging, which matches by an integer key column
    elif (not key_column and len(fields) == 1 and not prefixed_key
          and fields[0] in table.column_names and integer_keyed(table[fields[0]])):
        keys = None  # numbers: their buckets come from the numbers (bucket_ids_for_table), no key is kept
    else:
        keys = record_key_strings(table, fields, single_field_prefixed=prefixed_key)
    if not config.num_buckets:
        buckets = np.full(table.num_rows, PENDING, dtype=np.int32)
    elif auto_keys is not None:
        buckets = np.full(table.num_rows, auto_keys.bucket, dtype=np.int32)
    else:
        buckets = np.asarray(bucket_ids_for_table(table, config.record_key_fields, config.num_buckets,
                                                  record_keys=keys), dtype=np.int32)
    out = table.append_column(RECORD_KEY, keys) if key_column and keys is not None else table
    out = out.append_column(PARTITION_PATH, partitions)
    return out.append_column(BUCKET, pa.array(buckets))


@dataclass(frozen=True)
class RowSelection:
    """The rows of `source` at `indices` (all of them when None), gathered only when asked: a write holds its
    input once, and each file group's copy only while the group is written."""

    source: pa.Table
    indices: pa.Array | None = None

    @property
    def num_rows(self) -> int:
        return self.source.num_rows if self.indices is None else len(self.indices)

    @property
    def nbytes(self) -> int:
        """The bytes the rows take once gathered (a share of the source's)."""
        if self.indices is None or not self.source.num_rows:
            return self.source.nbytes
        return self.source.nbytes * len(self.indices) // self.source.num_rows

    def gather(self) -> pa.Table:
        if self.indices is None:
            return self.source
        rows = self.indices.to_numpy()
        columns = [_take_rising(column, rows) for column in self.source.columns]
        return pa.Table.from_arrays(columns, schema=self.source.schema)


def _take_rising(column: pa.ChunkedArray, rows: np.ndarray) -> pa.ChunkedArray:
    """The column's values at `rows` (ascending, as select_by_group makes them), taken chunk by chunk: Arrow's
    take of a chunked string column concatenates every chunk first, once per file group. A dictionary chunk
    whose rows hold one value keeps that value only (a file group's partition column: its dictionary page then
    holds the one value the file has)."""
    if column.num_chunks == 1:
        parts = [(column.chunk(0), rows)]
    else:
        ends = np.cumsum([len(c) for c in column.chunks])
        cuts = np.searchsorted(rows, ends[:-1])
        parts = [(chunk, part - (ends[i] - len(chunk))) for i, (chunk, part)
                 in enumerate(zip(column.chunks, np.split(rows, cuts), strict=True)) if len(part)]
    taken = [_one_valued(pc.take(chunk, pa.array(part))) for chunk, part in parts]
    return pa.chunked_array(taken, type=column.type)


def _one_valued(values: pa.Array) -> pa.Array:
    if not isinstance(values, pa.DictionaryArray) or not len(values) or values.null_count:
        return values
    codes = values.indices.to_numpy()
    first = int(codes[0])
    if len(values.dictionary) == 1 or not (codes == first).all():
        return values
    return pa.DictionaryArray.from_arrays(pa.array(np.zeros(len(values), dtype=codes.dtype)),
                                          values.dictionary.slice(first, 1))


def select_by_group(table: pa.Table) -> dict[tuple[str, int], RowSelection]:
    """Rows grouped by (partition path, bucket), each group keeping input order, without those two columns:
    they are the group's key (gathering strings row by row is the costly part of the split, done per group)."""
    grouped = _grouped(table)
    if grouped is None:
        return {}
    source, keys, order, ends = grouped
    if order is None:
        return {keys[0]: RowSelection(source)}
    return {key: RowSelection(source, pa.array(order[start:end]))
            for key, start, end in zip(keys, [0, *ends[:-1]], ends, strict=True)}


def split_by_group(table: pa.Table) -> dict[tuple[str, int], pa.Table]:
    """select_by_group's groups, gathered: the rows taken once in group order, each group a slice of them (a take
    per group and column cost 2.4 ms for a partition's 25,000 tagged rows in three groups, one take and slices 0.7
    ms). Dictionary columns are gathered group by group, each keeping the one value it holds (_one_valued)."""
    grouped = _grouped(table)
    if grouped is None:
        return {}
    source, keys, order, ends = grouped
    if order is None:
        return {keys[0]: source}
    starts = [0, *ends[:-1]]
    if any(pa.types.is_dictionary(f.type) for f in source.schema):
        return {key: RowSelection(source, pa.array(order[start:end])).gather()
                for key, start, end in zip(keys, starts, ends, strict=True)}
    taken = source.take(pa.array(order))
    return {key: taken.slice(start, end - start) for key, start, end in zip(keys, starts, ends, strict=True)}


def _grouped(table: pa.Table) -> tuple[pa.Table, list[tuple[str, int]], np.ndarray | None, list[int]] | None:
    """The rows without the partition path and bucket columns, the groups present (in sorted order), the row
    numbers of each group in turn (None: one group, every row) and where each group's rows end; None for no rows."""
    if table.num_rows == 0:
        return None
    parts = pc.dictionary_encode(table[PARTITION_PATH]).combine_chunks()
    codes = parts.indices.to_numpy(zero_copy_only=False).astype(np.int64)
    buckets = table[BUCKET].to_numpy().astype(np.int64)
    lowest = int(buckets.min())  # PENDING (-1) when tagging is still to place rows
    width = int(buckets.max()) - lowest + 1
    group = codes * width + buckets - lowest
    source = table.drop_columns([PARTITION_PATH, BUCKET])
    if group.min() == group.max():
        return source, [(parts.dictionary[int(codes[0])].as_py(), int(buckets[0]))], None, [table.num_rows]
    # a stable sort of small integers is a radix sort in numpy: far cheaper than a comparison sort
    top = group.max()  # one byte sorts in one radix pass (a load's partitions x buckets mostly fit), two in two
    narrow = np.int8 if top < 2**7 else np.int16 if top < 2**15 else np.int32 if top < 2**31 else np.int64
    order = np.argsort(group.astype(narrow), kind="stable")
    if len(order) < 2**31:  # each group's row numbers are held until it is written: half the bytes
        order = order.astype(np.int32)
    if top <= 4 * len(group):  # the groups present in sorted order, and where each one's rows end
        counts = np.bincount(group)
        present = np.flatnonzero(counts)
        counts = counts[present]
    else:
        present, counts = np.unique(group, return_counts=True)
    paths = parts.dictionary.to_pylist()
    keys = [(paths[g // width], g % width + lowest) for g in present.tolist()]
    return source, keys, order, np.cumsum(counts).tolist()


def latest_per_key(table: pa.Table, ordering_field: str | None, key_field: str = RECORD_KEY,
                   first_value: bool = False) -> pa.Table:
    """One row per record key: the highest ordering value, ties to the later row (Hudi's precombine; under
    FirstValueAvroPayload, `first_value`, to the earlier row).

    `key_field` may name the raw key column of a single-field key: its values map one-to-one to the
    record key strings, and counting distinct integers is much cheaper than distinct strings."""
    n = table.num_rows
    if n <= 1 or _strictly_increasing(table[key_field]) or all_distinct(table[key_field]):
        return table
    order, sorted_keys = _ranked(table, ordering_field, first_value, key_field)
    last = pc.not_equal(sorted_keys.slice(0, n - 1), sorted_keys.slice(1))
    if isinstance(last, pa.ChunkedArray):
        last = last.combine_chunks()
    chosen = pc.filter(order, pa.concat_arrays([last, pa.array([True])]))
    return table.take(pa.array(np.sort(chosen.to_numpy())))


def _ranked(table: pa.Table, ordering_field: str | None, first_value: bool = False,
            key_field: str = RECORD_KEY) -> tuple[pa.Array, pa.Array]:
    """Row indices sorted by record key (`key_field`: a column equal to it), then rank (ordering value, ties to the
    later row, or under `first_value` to the earlier), and the keys in that order."""
    cols = {"k": table[key_field], "p": pa.array(np.arange(table.num_rows, dtype=np.int64))}
    sort = [("k", "ascending", "at_start")]
    if ordering_field:
        cols["o"] = table[ordering_field]
        sort.append(("o", "ascending", "at_start"))
    sort.append(("p", "descending" if first_value else "ascending", "at_start"))
    order = pc.sort_indices(pa.table(cols), sort_keys=sort)
    return order, pc.take(cols["k"], order)


def versions_after_deletes(table: pa.Table, ordering_field: str | None, first_value: bool = False) -> pa.Table:
    """The rows of a write that also deletes (a changelog, delete markers) that still fold, per record key: a key
    whose top-ranked version (highest ordering value, ties to the later row, or under `first_value` the earlier) is
    a delete keeps that delete alone; any other keeps the versions ranked above its last delete, which ends what came
    before it."""
    n = table.num_rows
    deleting = pc.fill_null(table[DELETE], False).to_numpy(zero_copy_only=False)
    if n <= 1 or not deleting.any():
        return table
    ranked, keys = _ranked(table, ordering_field, first_value)
    order = ranked.to_numpy()
    starts_key = np.concatenate([[True], pc.not_equal(keys.slice(0, n - 1), keys.slice(1)).to_numpy(
        zero_copy_only=False)])
    group = np.cumsum(starts_key) - 1
    position = np.arange(n)
    last_delete = np.full(group[-1] + 1, -1)
    np.maximum.at(last_delete, group, np.where(deleting[order], position, -1))
    group_end = np.concatenate([np.flatnonzero(starts_key)[1:], [n]]) - 1
    cut = last_delete[group]
    keep = (position > cut) | ((position == cut) & (cut == group_end[group]))
    return table.take(pa.array(np.sort(order[keep])))


def _strictly_increasing(column: pa.ChunkedArray) -> bool:
    """Whether an integer column rises row by row (input sorted by its key, as bulk loads often are): then
    its values are distinct, and a comparison of neighbours is far cheaper than counting distinct values."""
    if not pa.types.is_integer(column.type) or column.null_count:
        return False
    values = column.to_numpy()
    return bool(np.all(values[1:] > values[:-1]))
