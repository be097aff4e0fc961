"""Hudi's SIMPLE and GLOBAL_SIMPLE indexes (and the tagging of BLOOM and GLOBAL_BLOOM, which finds the same file
groups): a key's file group is the one whose latest file slice holds it.

Tagging (Apache Hudi's HoodieSimpleIndex / HoodieGlobalSimpleIndex) reads the record keys of the latest file slices
of the partitions a write touches (global indexes: of every partition, so a key is unique in the table) and joins
them with the incoming keys (hudi_ds.write.tagging): a key found is an update of its file group, a key not found an
insert (placed by hudi_ds.write.file_sizing), a delete of a key not found nothing at all. The keys of a slice are
those of its base file and of its logs' data blocks; a key a log deleted still counts, as in Hudi's tagging.

A table whose record keys are the decimal digits of an integer column (hudi_ds.keys.keygen.integer_key_column) is
looked up by that column: reading and matching integers costs a fraction of decoding and hashing key strings.

File groups are numbered per partition by their position in `KeyLookup.slices` (the "slot"), the way bucket
tables number them by bucket: the write path keys its buffers, claims and targets by (partition, slot). A task
numbers the new file groups it makes from the partition's slot count, but each is its own (hudi_ds.write.task):
two tasks' new groups of one slot are two groups, with two random ids.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable, Iterable, Iterator, Sequence
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from typing import ClassVar, TypeVar

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.view import FileSlice, Visibility
from hudi_ds.keys.keygen import record_key_strings
from hudi_ds.keys.matching import is_in
from hudi_ds.merge import merge_slice
from hudi_ds.read.query import READ_THREADS
from hudi_ds.read.slice_reader import SliceReader
from hudi_ds.schema.meta import RECORD_KEY, with_meta
from hudi_ds.schema.strings import constant_strings
from hudi_ds.storage import Storage

PENDING = -1  # the slot of a row not placed yet (an insert, until hudi_ds.write.file_sizing places it)
SLOT = "__slot"
PARTITION = "__partition"  # the partition of a located key
LIVE = "__live"  # whether the latest slice holds the located key (not deleted by a log)
FILTER_BATCH_ROWS = 1 << 20  # held keys gathered before they are filtered down to the keys a write brings
T = TypeVar("T")
R = TypeVar("R")


def new_file_id() -> str:
    """A new file group id as Apache Hudi names those of its lookup indexes: a random UUID and the part "-0"."""
    return f"{uuid.uuid4()}-0"


@dataclass(frozen=True)
class KeyLookup:
    """What every task of a write needs to find the file groups of keys; made on the driver, pickled to tasks."""

    global_index: bool
    update_partition_path: bool
    slices: dict[str, tuple[FileSlice, ...]]  # partition -> latest slices; a group's slot is its position
    visibility: Visibility
    ordering: pa.Field | None  # the table's ordering field (log merging, partition moves)
    virtual_keys: tuple[str, ...] | None = None  # hoodie.populate.meta.fields=false: the record key fields
    integer_key: pa.Field | None = None  # the integer column equal to the record key, if the key generator makes one
    first_value: bool = False  # an equal ordering value keeps the held row (FirstValueAvroPayload)
    prunes_by_keys: ClassVar[bool] = False  # `located` reads fewer slices when told the keys a write brings

    @property
    def match_column(self) -> str:
        """The column tagging matches incoming rows with located keys by."""
        return self.integer_key.name if self.integer_key is not None else RECORD_KEY

    def slot_count(self, partition: str) -> int:
        return len(self.slices.get(partition, ()))

    def located(self, storage: Storage, partitions: Iterable[str],
                wanted: pa.Array | pa.ChunkedArray | None = None, threads: int = READ_THREADS) -> pa.Table:
        """The keys the latest slices of `partitions` hold: key, (with an ordering field) the ordering value, LIVE,
        partition (global indexes: tagging compares it with the incoming row's) and slot; the keys the slices hold
        live first (a key a log deleted may be live elsewhere).

        With `wanted` (the keys being written, in `match_column`'s type) only those are kept, filtered a batch of
        slices at a time: memory holds the matches, not every key of the table a global index reads (a lookup that
        finds keys instead of reading partitions, RECORD_INDEX, needs them). `threads`: files read at once (1: on
        the calling thread, for a caller whose other threads keep the cores busy)."""
        parts: list[pa.Table] = []
        unfiltered: list[pa.Table] = []
        probe = self._probe(wanted)
        candidates = [(partition, slot, sl) for partition in sorted(set(partitions))
                      for slot, sl in self._candidates(storage, partition, probe, threads)]
        with ThreadPoolExecutor(min(threads, max(1, len(candidates)))) as pool:
            # several slices' keys decode at once (a file of one or two columns keeps one thread busy); the
            # window of 2 x threads slices bounds what memory holds ahead of the filter
            reads = in_order(pool, threads, lambda c: self._slice_keys(storage, c[2]), candidates, 2 * threads)
            for (partition, slot, _), rows in zip(candidates, reads, strict=True):
                n = rows.num_rows
                if self.global_index:
                    rows = rows.append_column(PARTITION, constant_strings(partition, n))
                unfiltered.append(rows.append_column(SLOT, pa.array(np.full(n, slot, dtype=np.int32))))
                if wanted is not None and sum(t.num_rows for t in unfiltered) >= FILTER_BATCH_ROWS:
                    parts.append(self._among(pa.concat_tables(unfiltered), wanted))
                    unfiltered = []
        if unfiltered:
            parts.append(pa.concat_tables(unfiltered) if wanted is None
                         else self._among(pa.concat_tables(unfiltered), wanted))
        if not parts:
            return self._schema().empty_table()
        located = pa.concat_tables(parts)
        if pc.all(located[LIVE]).as_py():
            return located.combine_chunks()
        return located.take(pc.sort_indices(located, [(LIVE, "descending")])).combine_chunks()

    def _probe(self, wanted: pa.Array | pa.ChunkedArray | None) -> object:
        """What `_candidates` needs of the keys a write brings, prepared once for all partitions."""
        return None

    def _candidates(self, storage: Storage, partition: str, probe: object,
                    threads: int) -> Iterable[tuple[int, FileSlice]]:
        """The slots and latest slices of `partition` whose keys are read: all of them (hudi_ds.index.bloom_lookup
        leaves out those that cannot hold a key the write brings)."""
        return enumerate(self.slices.get(partition, ()))

    def _among(self, located: pa.Table, wanted: pa.Array | pa.ChunkedArray) -> pa.Table:
        return located.filter(is_in(located[self.match_column], wanted))

    def _key_columns(self) -> pa.Schema:
        """The key and, for a global index (whose tagging weighs a held row against a new one in another
        partition), the ordering value: a non-global index reads the key alone."""
        fields = [self.integer_key if self.integer_key is not None else pa.field(RECORD_KEY, pa.string())]
        compared = self.ordering is not None and self.global_index
        return pa.schema(fields + ([self.ordering] if compared and self.ordering is not None else []))

    def _schema(self) -> pa.Schema:
        partition = [pa.field(PARTITION, pa.string())] if self.global_index else []
        return pa.schema([*self._key_columns(), pa.field(LIVE, pa.bool_()), *partition, pa.field(SLOT, pa.int32())])

    def _slice_keys(self, storage: Storage, sl: FileSlice) -> pa.Table:
        """The keys of the slice's base file and of the data blocks of its log files, one row per key (the
        highest ordering value), and whether the merged slice holds the key (LIVE). A key a log deleted still
        counts, as Apache Hudi's tagging reads base files: the next version of it goes to this file group, where
        the merge rule weighs it against the base row."""
        columns = self._key_columns()
        if not sl.log_files:
            assert sl.base_file is not None
            with open_base_file(storage, sl.base_file.path, pre_buffer=storage.read_ahead) as pf:
                if self.virtual_keys is not None:  # computed from the key columns (hudi_ds.keys.virtual_keys)
                    wanted = [c for c in (*self.virtual_keys, *columns.names[1:]) if c in pf.schema_arrow.names]
                    table = pf.read(columns=list(dict.fromkeys(wanted)))
                    table = table.append_column(RECORD_KEY, record_key_strings(table, self.virtual_keys))
                else:
                    present = [c for c in columns.names if c in pf.schema_arrow.names]
                    table = pf.read(columns=present)
            for f in columns:
                if f.name not in table.column_names:
                    table = table.append_column(f, pa.nulls(table.num_rows, f.type))
            keys = table.select(columns.names).cast(columns)
            return keys.append_column(LIVE, pa.array(np.ones(keys.num_rows, dtype=bool)))
        ordering = self.ordering.name if self.ordering is not None else None
        ordered = [self.ordering] if self.ordering is not None else []  # the logs' merge weighs versions by it
        schema = with_meta(pa.schema(ordered))
        columns = pa.schema([pa.field(RECORD_KEY, pa.string()), *ordered])
        reader = SliceReader(storage, schema, ordering, self.visibility, self.virtual_keys is not None,
                             key_fields=self.virtual_keys or ())
        base = reader.read_base(sl)
        data, deletes = reader.read_logs(sl)
        parts = [t.select(columns.names).cast(columns) for t in (base, data.table if data else None) if t is not None]
        versions = pa.concat_tables(parts) if parts else columns.empty_table()
        key = RECORD_KEY
        if self.integer_key is not None:  # integers group several times faster than key strings
            key = self.integer_key.name
            versions = versions.set_column(0, self.integer_key, pc.cast(versions[RECORD_KEY], self.integer_key.type))
        if self.ordering is None or self.ordering.name not in self._key_columns().names:
            keys = versions.group_by(key).aggregate([]).select([key])
        else:
            top = versions.group_by(key).aggregate([(self.ordering.name, "max")])
            keys = pa.table({key: top[key], self.ordering.name: top[f"{self.ordering.name}_max"]})
        if deletes is None:  # no log deletes a key: the merged slice holds every key its files hold
            return keys.append_column(LIVE, pa.array(np.ones(keys.num_rows, dtype=bool)))
        merged = merge_slice(base, data, deletes, ordering, schema)
        held = merged[RECORD_KEY] if self.integer_key is None else pc.cast(merged[RECORD_KEY], self.integer_key.type)
        return keys.append_column(LIVE, pc.is_in(keys[key], value_set=held))


def in_order(pool: ThreadPoolExecutor, threads: int, fn: Callable[[T], R], items: Sequence[T],
             window: int) -> Iterator[R]:
    """`fn` of each item, in order: with `threads` > 1 computed on `pool` at most `window` items ahead of the one
    consumed, else on the calling thread (no hand-over to another thread and back)."""
    if threads <= 1:
        yield from map(fn, items)
        return
    pending: list[Future[R]] = []
    for item in items:
        pending.append(pool.submit(fn, item))
        if len(pending) >= window:
            yield pending.pop(0).result()
    for fut in pending:
        yield fut.result()


def holds_prefixed_keys(storage: Storage, slices: Iterable[FileSlice], field: str) -> bool:
    """Whether a table of one-field ComplexKeyGenerator keys holds them as `field:value`, the form Apache Hudi
    0.14.0 and 1.1+ write (0.14.1-1.0.2 write the bare value: HUDI-7001): every key of its first base file says.
    A table without base files takes the bare value, as hudi_ds writes it."""
    for sl in slices:
        if sl.base_file is not None:
            with open_base_file(storage, sl.base_file.path) as pf:
                keys = pf.read_row_group(0, columns=[RECORD_KEY])[RECORD_KEY] if pf.num_row_groups else None
            if keys is not None and len(keys):
                return bool(pc.all(pc.starts_with(keys, f"{field}:")).as_py())
    return False
