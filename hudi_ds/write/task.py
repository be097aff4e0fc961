"""The executor side of a write: route rows to file groups, buffer with bounded memory, write files.

Rows are buffered per (partition, bucket), as selections of the input until the buffers pass `max_buffer_bytes`,
then gathered and the largest groups spilled to local Arrow IPC files. `finish()` then writes two groups at a time,
so memory holds the input (or the buffers) plus two file groups' rows.
"""

from __future__ import annotations

import functools
import threading
import time
from collections import deque
from collections.abc import Callable, Generator, Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import replace

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import InvalidDataError
from hudi_ds.files.base_file import GrownFilter, widened_key_range
from hudi_ds.files.encoding import few_valued_as_dictionaries, few_valued_strings
from hudi_ds.index.bucket import new_bucket_file_id
from hudi_ds.index.lookup import PENDING, SLOT, new_file_id
from hudi_ds.keys.auto_keys import AutoKeyGenerator
from hudi_ds.keys.keygen import integer_key_column, record_key_strings
from hudi_ds.keys.matching import index_in
from hudi_ds.keys.partition_path import partition_path_strings
from hudi_ds.keys.partition_scheme import timestamp_partitions
from hudi_ds.log.blocks import natural_deletes
from hudi_ds.merge import LogDeletes, LogVersions, merge_slice_counted
from hudi_ds.read.query import READ_THREADS
from hudi_ds.recovery.heartbeat import touch_heartbeat
from hudi_ds.schema.meta import META_COLUMNS, PARTITION_PATH, RECORD_KEY
from hudi_ds.schema.strings import constant_dictionary, constant_strings, expand_dictionaries
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import claim_path
from hudi_ds.write.buffers import GroupBuffers
from hudi_ds.write.change_data import task_change_data, writes_change_data
from hudi_ds.write.delete_markers import apply_delete_markers
from hudi_ds.write.group_writer import GroupWriteContext, ensure_partition_metadata, read_base_and_footer
from hudi_ds.write.input import cast_to
from hudi_ds.write.insert_duplicates import without_held_keys
from hudi_ds.write.messages import ChangeDataFile, DeferredRows, GroupKeys, TaskResult, WrittenFile
from hudi_ds.write.partial_moves import fold_partial, with_held_cells
from hudi_ds.write.plan import GroupTarget, WritePlan
from hudi_ds.write.routing import (
    BUCKET,
    DELETE,
    RowSelection,
    latest_per_key,
    require_columns,
    route,
    select_by_group,
    split_by_group,
    versions_after_deletes,
)
from hudi_ds.write.shared_groups import stage_rows
from hudi_ds.write.tagging import tag

_WRITER_THREADS = 2
_ARRIVAL = "__arrival"  # global indexes: each row's place in the task's input
_PARALLEL_ROUTE_ROWS = 200_000
_TAGGING_THREADS = 2  # lookup indexes: batches tagged at once
_TAGGED_AHEAD = 1  # lookup indexes: batches being tagged beyond the next one
_HELD_GROUPS = 2 * _WRITER_THREADS  # lookup indexes: file groups tagged ahead of the writes


def claim_group(storage: Storage, instant: str, partition: str, bucket: int, file_id: str,
                task_id: int) -> tuple[str, bool]:
    """Which task of a write writes the base file of a new bucket (or, copy-on-write, rewrites an existing
    one): the first to claim it. The claim names the claiming Spark partition, so a retried attempt of that
    task (same partition id) takes its claim over instead of finding the bucket taken by its own failed attempt.
    Returns the group's file id and whether `task_id` owns it."""
    rel = claim_path(instant, partition, bucket)
    if storage.put_if_absent(rel, f"{task_id} {file_id}".encode()):
        return file_id, True
    owner, claimed = storage.read_bytes(rel).decode().split(" ", 1)
    return claimed, int(owner) == task_id


def _ready(rows: pa.Table) -> Callable[[], pa.Table]:
    return lambda: rows


def _require_ordering_values(table: pa.Table, field: str | None) -> None:
    """Every row written (deletes aside) needs an ordering value, as Apache Hudi's writers demand: readers cannot
    agree on which version of a key wins when one of them has none."""
    if not field or field not in table.column_names or not table[field].null_count:
        return
    nulls = pc.is_null(table[field])
    if DELETE in table.column_names:
        nulls = pc.and_(nulls, pc.invert(pc.fill_null(table[DELETE], False)))
    count = int(pc.sum(nulls).as_py() or 0)
    if count:
        raise InvalidDataError(f"the ordering (precombine) column {field!r} is null in {count} row(s); every "
                               "written row needs a value (as in Apache Hudi): fill or drop those rows")


class TaskWriter:
    """Writes one task's rows of a WritePlan and reports the files as a TaskResult."""

    def __init__(self, plan: WritePlan, task_id: int = 0, stage_id: int = 0, attempt: int = 0,
                 sole_task: bool = False) -> None:
        self.plan = plan
        self.task_id = task_id
        # the write's only task (HudiTable.write): no other task can claim its file groups, so it claims none (each
        # claim is a file, in a folder per partition made and removed again: 9 of the 18 folders of a 2M-row upsert's
        # scratch space, whose removal the commit waited for)
        self.sole_task = sole_task
        self.storage = plan.storage
        self.ctx = GroupWriteContext.for_plan(self.storage, plan, task_id, f"{task_id}-{stage_id}-{attempt}")
        self.buffers = GroupBuffers(plan.max_buffer_bytes)
        self.auto_keys = (None if plan.config.record_key_fields
                          else AutoKeyGenerator(plan.instant, task_id, plan.num_buckets))
        self.partitions: set[str] = set()
        self.files: list[WrittenFile] = []
        self.deferred: list[DeferredRows] = []
        self.deletes: list[GroupKeys] = []
        self.outranked: list[GroupKeys] = []
        self.rewritten: list[GroupKeys] = []  # virtual keys: the keys of each base file rewritten
        self.change_data: list[ChangeDataFile] = []
        self.inserted: list[GroupKeys] = []
        self.arrived = 0  # rows written so far
        self.filled: set[tuple[str, int]] = set()  # merge-on-read small files taking inserts: rewritten as base files
        self.seq = 0
        # new_files_only: string columns encoded before the split (_split), chosen on the first rows and kept, so
        # every chunk's rows of a file group share their columns' types
        self.few_valued: list[str] | None = None
        self._lock = threading.Lock()
        self._last_beat = time.monotonic()  # begin() wrote the first heartbeat

    def write(self, table: pa.Table) -> None:
        """Route one chunk of input rows (any number of calls)."""
        if table.num_rows == 0:
            return
        config = self.plan.config
        if self.plan.operation == "delete_partition":  # it writes nothing: the commit replaces the rows' partitions
            if self.plan.partitions_to_delete is None:
                self.partitions.update(partition_path_strings(
                    table, config.partition_fields, config.hive_style, config.url_encode,
                    timestamp_partitions(config)).unique().to_pylist())
            return
        deleting = self.plan.operation == "delete"
        require_columns(table, config, self.plan.operation, ordering=not deleting or not self.ctx.natural_deletes)
        if deleting and not len(self.plan.schema):
            return  # the table has no schema: no rows were ever written, so there is nothing to delete
        instants = list(timestamp_partitions(config))  # their key generator reads them before any promotion
        if deleting:
            ordering = [self.plan.ordering_field] if self.plan.ordering_field in table.column_names else []
            cols = dict.fromkeys(config.record_key_fields + config.partition_fields + ordering)
            schema = pa.schema([self.plan.schema.field(c) for c in cols])
            table = cast_to(table, schema, given=instants)
            table = table.append_column(DELETE, pa.array(np.ones(table.num_rows, dtype=bool)))
        else:
            table = cast_to(table, self.plan.schema, keep=[DELETE], given=instants)
            table = apply_delete_markers(table, self.plan.delete_marker, self.plan.operation)
            if table.num_rows == 0:
                return
            _require_ordering_values(table, self.plan.ordering_field)
        if self.plan.lookup is not None and self.plan.lookup.global_index:  # the order the rows came in, to
            arrival = np.arange(self.arrived, self.arrived + table.num_rows, dtype=np.int64)  # combine them
            self.arrived += table.num_rows  # across partitions as within one (ties to the later row)
            table = table.append_column(_ARRIVAL, pa.array(arrival))
        for key, part in self._by_group(table):
            self.buffers.add(key, part)

    def _by_group(self, table: pa.Table) -> list[tuple[tuple[str, int], RowSelection]]:
        """The rows routed and split by file group. A big chunk is routed in parts on the writer threads
        (key strings, hashing and the split release the GIL); a group's rows stay in input order."""
        # the keys are gathered through the split only where they cannot be built again from the group's rows
        # (generated keys) or tagging matches by them (not by an integer key column): _write_group builds them,
        # cheaper than gathering strings
        lookup = self.plan.lookup
        key_column = self.auto_keys is not None or (lookup is not None and lookup.match_column == RECORD_KEY)
        if lookup is not None and not key_column and table[lookup.match_column].null_count:
            record_key_strings(table, self.plan.config.record_key_fields)  # refuses null keys before any file
        if self.auto_keys is not None or table.num_rows < _PARALLEL_ROUTE_ROWS:  # generated keys are sequential
            return list(self._split(table, key_column).items())
        step = -(-table.num_rows // _WRITER_THREADS)
        chunks = [table.slice(s, step) for s in range(0, table.num_rows, step)]
        with ThreadPoolExecutor(_WRITER_THREADS) as pool:
            parts = list(pool.map(lambda chunk: self._split(chunk, key_column), chunks))
        return [item for groups in parts for item in groups.items()]

    def _split(self, table: pa.Table, key_column: bool) -> dict[tuple[str, int], RowSelection]:
        """Rows routed and split by file group; where every group becomes a new base file, few-valued string
        columns dictionary-encoded before routing (files/encoding.py: partition paths are then built per dictionary
        value, the groups gather integers, and parquet writes them as given)."""
        config = self.plan.config
        if self.new_files_only:
            with self._lock:
                if self.few_valued is None:
                    # the key and ordering columns stay plain: a write's versions of a key are ranked by them; so do
                    # the fields a timestamp key generator formats
                    kept = {*config.record_key_fields, self.plan.ordering_field, *timestamp_partitions(config)}
                    self.few_valued = [c for c in few_valued_strings(table) if c not in kept]
            table = few_valued_as_dictionaries(table, self.few_valued)
        return select_by_group(route(table, config, self.auto_keys, self.plan.prefixed_keys, key_column))

    @property
    def new_files_only(self) -> bool:
        """Whether every file group this write fills is new (a load into an empty bucket-index table, or an
        overwrite), written whole as one base file by this task unless another task claimed it first."""
        plan = self.plan
        return (plan.lookup is None and plan.partial is None and plan.operation != "delete"
                and (plan.is_overwrite or not plan.groups))

    def finish(self) -> TaskResult:
        """Write every buffered file group: two at a time (parquet encoding releases the GIL), taking
        each group's rows out of the buffers only when its turn comes, so memory stays bounded. The next group
        starts when either write ends, not the older one: a long rewrite of a small file then runs beside the
        short log writes and the tagging of the next partition instead of holding them back."""
        groups = self._buffered() if self.plan.lookup is None else self._tagged()
        try:
            with ThreadPoolExecutor(_WRITER_THREADS) as pool:
                pending: set[Future[None]] = set()
                for key, rows in groups:
                    if len(pending) >= _WRITER_THREADS:
                        done, pending = wait(pending, return_when=FIRST_COMPLETED)
                        for fut in done:
                            fut.result()
                    self._heartbeat()
                    pending.add(pool.submit(lambda k, gather: self._write_group(k, gather()), key, rows))
                for fut in wait(pending).done:
                    fut.result()
        finally:
            groups.close()  # a failed write tags no further partition (nor claims a small file) once it returns
            self.buffers.close()
        files = sorted(self.files, key=lambda f: f.path)
        deferred = sorted(self.deferred, key=lambda d: (d.partition, d.bucket))
        deletes = sorted(self.deletes, key=lambda d: (d.partition, d.file_id))
        outranked = sorted(self.outranked, key=lambda d: (d.partition, d.file_id))
        change_data = sorted(self.change_data, key=lambda c: c.path)
        return TaskResult(self.task_id, tuple(files), tuple(sorted(self.partitions)), tuple(deferred), tuple(deletes),
                          tuple(outranked), tuple(change_data), tuple(self.inserted),
                          tuple(sorted(self.rewritten, key=lambda d: (d.partition, d.file_id))))

    def abort(self) -> None:
        self.buffers.close()

    def _buffered(self) -> Generator[tuple[tuple[str, int], Callable[[], pa.Table]], None, None]:
        """Each file group's rows, taken out of the buffers only when its turn comes (an insert-if-absent's rows
        whose keys the partition holds left out)."""
        existing, held, held_in = self.plan.existing_keys, None, None
        for key in sorted(self.buffers.keys()):
            rows = self.buffers.pop(key)
            if existing is not None:
                if held_in != key[0]:  # the partition's keys, read once for its buckets
                    held, held_in = existing.located(self.storage, [key[0]]), key[0]
                assert held is not None
                rows = self._without_held(rows, held, existing.match_column)
            yield key, rows

    def _without_held(self, rows: Callable[[], pa.Table], held: pa.Table, key_field: str) -> Callable[[], pa.Table]:
        """The group's rows, once gathered, without those whose keys `held` holds (write.insert_duplicates)."""
        def gather() -> pa.Table:
            table = rows()
            if key_field not in table.column_names:  # routed without the key column (_by_group)
                table = table.append_column(RECORD_KEY, record_key_strings(table, self.plan.config.record_key_fields))
            return without_held_keys(table, held, key_field, self.plan.duplicate_policy)

        return gather

    def _tagged(self) -> Generator[tuple[tuple[str, int], Callable[[], pa.Table]], None, None]:
        """Lookup indexes: the rows of each partition (global ones: of all of them, as a key is one
        record in the table) tagged with the file groups holding their keys, the inserts placed."""
        lookup = self.plan.lookup
        assert lookup is not None
        partitions = [p for p, _ in self.buffers.keys()]
        batches = deque([[p] for p in partitions] if not lookup.global_index else [partitions] if partitions else [])
        # batches are tagged on threads of their own, ahead of the writes: a writer thread never waits for the
        # next batch's tagging while there is a file to write. Base files (a small file's rewrite, new file
        # groups: the long writes) go first; log files, short, fill a writer that would wait, else follow, so
        # the write ends on short log writes beside the last base files
        # one batch has the cores to itself; several are tagged beside the writes, each reading its files on
        # its own thread (a hand-over to a reading thread and back waits for a core: 2M rows, SIMPLE, wall
        # 0.361 -> 0.350 s, CPU 0.595 -> 0.569 s)
        threads = READ_THREADS if len(batches) == 1 else 1
        tagger = ThreadPoolExecutor(_TAGGING_THREADS)
        tagging: deque[Future[list[tuple[tuple[str, int], pa.Table]]]] = deque()
        bases: deque[tuple[tuple[str, int], pa.Table]] = deque()
        logs: deque[tuple[tuple[str, int], pa.Table]] = deque()
        try:
            while batches or tagging or bases or logs:
                while batches and len(tagging) <= _TAGGED_AHEAD:
                    tagging.append(tagger.submit(self._tag_batch, batches.popleft(), threads))
                held = len(bases) + len(logs)  # groups tagged and not yet written: memory holds their rows
                if tagging and (not held or (tagging[0].done() and held < _HELD_GROUPS)):
                    self._heartbeat()
                    for key, group in tagging.popleft().result():
                        (logs if self._appends_log(key) else bases).append((key, group))
                    continue
                key, group = bases.popleft() if bases else logs.popleft()
                yield key, _ready(group)
        finally:
            tagger.shutdown(cancel_futures=True)  # a failed write tags no further batch

    def _tag_batch(self, batch: list[str], threads: int) -> list[tuple[tuple[str, int], pa.Table]]:
        """The rows of the partitions of `batch` by the file group they go to (_placed; `threads`: files read at
        once)."""
        rows = pa.concat_tables([self._partition_rows(p) for p in batch])
        if _ARRIVAL in rows.column_names:
            rows = rows.take(pc.sort_indices(rows[_ARRIVAL])).drop_columns([_ARRIVAL])
        return list(self._placed(rows, batch, threads))

    def _appends_log(self, key: tuple[str, int]) -> bool:
        """Whether the group's rows go to a new log file of an existing file group (not a base file)."""
        plan = self.plan
        return (plan.config.is_mor and not plan.is_overwrite and key in plan.groups and key not in self.filled)

    def _partition_rows(self, partition: str) -> pa.Table:
        rows = self.buffers.take((partition, PENDING))
        # a global index's tagging compares and moves partition paths (strings); the others only split the rows by
        # it, and a dictionary of the one path is not hashed again row by row (routing.split_by_group)
        global_index = self.plan.lookup is not None and self.plan.lookup.global_index
        constant = constant_strings if global_index else constant_dictionary
        return rows.append_column(PARTITION_PATH, constant(partition, rows.num_rows))

    def _placed(self, rows: pa.Table, partitions: list[str],
                threads: int) -> Iterator[tuple[tuple[str, int], pa.Table]]:
        """The rows of `partitions` by file group (partition, slot): each key's versions combined as _write_group
        combines them (a partial update keeps the cells of every version), then tagged, the inserts of each partition
        placed into its small files and new file groups (hudi_ds.write.file_sizing)."""
        plan, lookup, placement = self.plan, self.plan.lookup, self.plan.placement
        assert lookup is not None and placement is not None
        keys = plan.config.record_key_fields
        if keys and not plan.is_overwrite:  # an overwrite replaces the file groups; generated keys are all new
            rows = self._combine(rows, lookup.match_column)  # one version of a key, as _write_group folds them
            if lookup.global_index:  # every key of the table is read: keep those of this write only
                located = lookup.located(self.storage, lookup.slices, rows[lookup.match_column], threads)
            else:
                located = lookup.located(self.storage, partitions,
                                         rows[lookup.match_column] if lookup.prunes_by_keys else None, threads)
            if plan.existing_keys is not None:  # insert-if-absent
                rows = without_held_keys(rows, located, lookup.match_column, plan.duplicate_policy)
            rows = tag(rows, located, lookup)
            if plan.partial is not None and lookup.global_index:
                rows = with_held_cells(rows, self.plan, self.storage)
        else:
            rows = rows.append_column(SLOT, pa.array(np.full(rows.num_rows, PENDING, dtype=np.int32)))
        groups = split_by_group(rows.rename_columns([BUCKET if c == SLOT else c for c in rows.column_names]))
        for (partition, slot), inserts in sorted(groups.items()):
            if slot != PENDING:
                continue
            del groups[(partition, slot)]
            if keys:  # for the coordinator: another task may have placed one of these keys elsewhere
                built = RECORD_KEY not in inserts.column_names  # matched by an integer key column (_by_group)
                new_keys = record_key_strings(inserts, keys) if built else inserts[RECORD_KEY]
                self.inserted.append(GroupKeys(partition, "", pa.table({RECORD_KEY: new_keys}).combine_chunks()))
                if built and self.ctx.virtual_keys is None:  # the rows take them: _write_group builds no key twice
                    inserts = inserts.append_column(RECORD_KEY, new_keys)
            existing = lookup.slot_count(partition)
            offset = 0
            claim = functools.partial(self._claims_small_file, partition)
            for target, count in placement.place(partition, inserts.num_rows, existing, not plan.is_overwrite, claim):
                part = inserts.slice(offset, count)
                offset += count
                if target < existing:
                    self.filled.add((partition, target))
                held = groups.get((partition, target))
                if held is not None and RECORD_KEY in part.column_names and RECORD_KEY not in held.column_names:
                    held = held.append_column(RECORD_KEY, record_key_strings(held, keys))
                groups[(partition, target)] = part if held is None else pa.concat_tables([held, part])
        yield from sorted(groups.items())

    def _claims_small_file(self, partition: str, slot: int) -> bool:
        """Whether this task rewrites the small file at `slot` with new keys: the first task of the write to claim it
        does (the claim _write_group then finds); the others put their new keys elsewhere, not into logs of the
        group's new slice (merge-on-read) nor into rows the coordinator merges (copy-on-write)."""
        target = self.plan.groups[(partition, slot)]
        return self._claim(partition, slot, target.file_id)[1]

    def _claim(self, partition: str, bucket: int, file_id: str) -> tuple[str, bool]:
        """claim_group, or the group itself for the write's only task."""
        if self.sole_task:
            return file_id, True
        return claim_group(self.storage, self.plan.instant, partition, bucket, file_id, self.task_id)

    def _heartbeat(self, every_s: float = 10.0) -> None:
        """Tell other writers this instant is alive (at most every `every_s` seconds)."""
        now = time.monotonic()
        if now - self._last_beat >= every_s:
            touch_heartbeat(self.storage, self.plan.instant)
            self._last_beat = now

    def _write_group(self, key: tuple[str, int], rows: pa.Table) -> None:
        partition, bucket = key
        plan = self.plan
        with self._lock:
            new_partition = partition not in self.partitions
            self.partitions.add(partition)
        if new_partition:
            ensure_partition_metadata(self.storage, partition, plan.instant)
        keys = plan.config.record_key_fields
        target = None if plan.is_overwrite else plan.groups.get(key)
        # routed without the key column (_by_group): built here, but not for a new virtual-key base file, which
        # holds no keys (a one-field key combines by its own column)
        keyless = (self.ctx.virtual_keys is not None and len(keys) == 1 and target is None
                   and DELETE not in rows.column_names)
        if RECORD_KEY not in rows.column_names and not keyless:
            rows = rows.append_column(RECORD_KEY, record_key_strings(rows, keys))
        # generated keys are unique, and a lookup index's rows were combined before tagging (_placed)
        if keys and (plan.lookup is None or plan.is_overwrite):
            rows = self._combine(rows, keys[0] if len(keys) == 1 else RECORD_KEY)
        if DELETE in rows.column_names:
            is_del = pc.fill_null(rows[DELETE], False)
            deletes = rows.filter(is_del)
            data = rows.filter(pc.invert(is_del)).drop_columns([DELETE])
        else:
            deletes, data = None, rows
        if target is not None and plan.config.is_mor and key not in self.filled:
            if deletes is not None and deletes.num_rows and plan.operation != "delete":
                self._report_deletes(partition, target.file_id, deletes)
            records = self._records(data, target.file_id, partition)
            self.files.append(self.ctx.write_log(
                partition, target.file_id, bucket, target.base_instant, target.base_file or "",
                target.next_log_version, records, deletes, plan.partial_columns(),
            ))
            return
        if target is None and data.num_rows == 0:
            return  # deletes of keys in a bucket that does not exist yet: nothing to delete
        if plan.lookup is not None and target is None:
            # a lookup index's new file group is this task's alone, under a random id (Apache Hudi's tasks name
            # theirs by random UUID prefixes): another task's new groups of the partition, numbered from the same
            # slot, are other groups, so no task writes its new keys into logs of a group another one created
            file_id, owner = new_file_id(), True
        else:
            file_id, owner = self._claim(partition, bucket, target.file_id if target else new_bucket_file_id(bucket))
        if target is not None and deletes is not None and deletes.num_rows and plan.operation != "delete":
            self._report_deletes(partition, file_id, deletes)  # for the coordinator, should the group be shared
        if RECORD_KEY not in data.column_names:  # keyless: null in the new base file, staged rows need them
            data = data.append_column(RECORD_KEY, pa.nulls(data.num_rows, pa.string()) if owner
                                      else record_key_strings(data, keys))
        # a new base file, and a rewrite that keeps the base file's dictionaries, take the columns of one value per
        # file as dictionaries (a rewrite's merge would encode them to match the base rows)
        records = self._records(data, file_id, partition,
                                new_base=owner and (target is None or self._keeps_dictionaries))
        if not owner:  # logs and staged rows take plain strings (few-valued columns may come encoded: _split)
            records = expand_dictionaries(records, self.ctx.schema)
        if owner and target is not None:
            self._rewrite_base(partition, bucket, target, records, deletes)
        elif owner:
            self.files.append(self.ctx.write_base(partition, file_id, bucket, records, "null", data.num_rows, 0))
        elif plan.config.is_mor:  # a new bucket another task created: logs in its first slice
            self.files.append(self.ctx.write_log(partition, file_id, bucket, plan.instant, "", 1, records, None,
                                                 plan.partial_columns()))
        else:  # copy-on-write: one base file per group and instant, so the coordinator merges these rows
            self.deferred.append(stage_rows(self.ctx, partition, file_id, bucket, records,
                                            deletes if target is not None else None))

    def _combine(self, rows: pa.Table, key_field: str) -> pa.Table:
        """One row per record key (Hudi's precombine): the winner under the table's merge mode, its cells filled
        from the key's other rows where a partial update mode says it gives none; in a write that also deletes a
        key, from the rows ranked after its last delete only (routing.versions_after_deletes)."""
        plan = self.plan
        ordering = plan.ordering_field if plan.ordering_field in rows.column_names else None
        partial = plan.partial
        if partial is None or plan.partial_columns():
            return latest_per_key(rows, ordering, key_field, plan.first_value)
        if DELETE not in rows.column_names:
            return fold_partial(rows, ordering, key_field, self.plan.partial)
        rows = versions_after_deletes(rows, ordering)
        is_del = pc.fill_null(rows[DELETE], False)
        folded = fold_partial(rows.filter(pc.invert(is_del)).drop_columns([DELETE]), ordering, key_field, self.plan.partial)
        folded = folded.append_column(DELETE, pa.array(np.zeros(folded.num_rows, dtype=bool)))
        return pa.concat_tables([folded.select(rows.column_names), rows.filter(is_del)])

    def _report_deletes(self, partition: str, file_id: str, deletes: pa.Table) -> None:
        """Keep the keys (and ordering values) this task deletes in a group, for the coordinator to settle
        against versions other tasks wrote (hudi_ds.write.cross_task)."""
        with self._lock:
            self.deletes.append(GroupKeys(partition, file_id, self._keys(deletes)))

    def _keys(self, rows: pa.Table) -> pa.Table:
        ordering = self.plan.ordering_field
        cols = [RECORD_KEY] + ([ordering] if ordering and ordering in rows.column_names else [])
        return rows.select(cols).combine_chunks()

    def _report_outranked(self, partition: str, file_id: str, base: pa.Table, records: pa.Table,
                          held: pa.Array) -> None:
        """Keep the keys whose row the base file's row outranks (the rewrite drops them): should another task of
        the write delete such a key with a lower ordering value, the row still wins the write's own merge, and
        the base row stays (hudi_ds.write.shared_groups). `held`: each record's row in `base` (null: none)."""
        field = self.plan.ordering_field
        if not field or records.num_rows == 0:
            return
        outranks = pc.greater_equal if self.plan.first_value else pc.greater
        beaten = pc.fill_null(outranks(pc.take(base[field], held), records[field]), False)
        if pc.any(beaten).as_py():
            with self._lock:
                self.outranked.append(GroupKeys(partition, file_id, self._keys(records.filter(beaten))))

    def _match_key(self, *tables: pa.Table | None) -> str:
        """The column a rewrite matches records by: the integer column equal to the record key when the key
        generator makes one and every table has it (matching integers is cheaper), else the record key."""
        c = self.plan.config
        column = integer_key_column(c.key_generator, c.record_key_fields, c.partition_fields, self.plan.schema) \
            if c.populate_meta_fields else None
        if column is None or any(t is not None and column not in t.column_names for t in tables):
            return RECORD_KEY
        return column

    def _records(self, data: pa.Table, file_name: str, partition: str, new_base: bool = False) -> pa.Table:
        with self._lock:
            first, self.seq = self.seq, self.seq + data.num_rows
        return self.ctx.with_meta(data, file_name, first, partition, new_base)

    @property
    def _keeps_dictionaries(self) -> bool:
        """Whether a rewrite reads the base file's columns of one value per file as dictionaries and writes them so
        (not for computed meta columns or partial updates)."""
        return self.ctx.virtual_keys is None and self.plan.partial is None

    def _rewrite_base(self, partition: str, bucket: int, target: GroupTarget, records: pa.Table,
                      deletes: pa.Table | None) -> None:
        """Copy-on-write: the bucket's base file merged with this write's rows, as a new base file."""
        full = self.ctx.schema
        key = self._match_key(records, deletes)
        change_data = writes_change_data(self.plan)
        # columns of one value per file (commit time, partition...) stay dictionaries from read to write; not the
        # keys and ordering values the merge compares
        kept = (frozenset(full.names) - {key, RECORD_KEY, self.plan.ordering_field} if self._keeps_dictionaries
                else frozenset())
        base, previous = read_base_and_footer(self.storage, target.base_file, full, self.ctx.virtual_keys, kept) \
            if target.base_file else (None, None)
        n_data = records.num_rows
        dels = None
        if deletes is not None and deletes.num_rows:
            n = deletes.num_rows
            field = self.plan.ordering_field
            ordv = deletes[field] if field in deletes.column_names else pa.nulls(n, full.field(field).type if field
                                                                               else pa.int64())
            ordv = ordv.combine_chunks() if isinstance(ordv, pa.ChunkedArray) else ordv
            natural = np.full(n, self.ctx.natural_deletes) | natural_deletes(ordv)
            dels = LogDeletes(deletes[key].combine_chunks(), ordv, natural,
                              np.ones(n, dtype=np.int64), np.arange(n_data, n_data + n, dtype=np.int64))
        absent = {c: np.ones(n_data, dtype=bool) for c in full.names
                  if c not in META_COLUMNS and c not in self.plan.partial_columns()} \
            if self.plan.partial_columns() else None
        merged, counts = merge_slice_counted(
            base, LogVersions(records, np.ones(n_data, dtype=np.int64), np.arange(n_data, dtype=np.int64), absent),
            dels, self.plan.ordering_field, full, key_field=key, partial=self.plan.partial,
            first_value=self.plan.first_value, keep_dictionaries=bool(kept),
        )
        updates, grown, key_range = 0, None, None
        if base is not None:
            # the records are one per key: without deletes the merge counted those meeting a base row, and a record
            # a base row outranks is looked for only where the merge kept such a row (a bloom filter grows by the
            # records the file did not hold)
            counted = dels is None and self.plan.partial is None and not self.ctx.bloom_filters
            held = None if counted and not counts.base_rows_kept else index_in(records[key], base[key])
            updates = counts.base_rows_met if held is None else len(held) - held.null_count
            if self.plan.operation != "delete" and held is not None:
                self._report_outranked(partition, target.file_id, base, records, held)
            # without deletes the rewrite keeps every key of the file: its footer's key range widens by the
            # records' keys
            keeps_keys = dels is None and self.ctx.virtual_keys is None
            if previous is not None and keeps_keys:
                key_range = widened_key_range(previous, records[RECORD_KEY])
            if previous is not None and held is not None and self.ctx.bloom_filters:  # its filter holds the keys it
                grown = GrownFilter(previous, records.filter(pc.is_null(held))[RECORD_KEY])  # keeps: add new ones
        if self.ctx.virtual_keys is not None:  # the file cannot tell the task's rows (maybe none) from the base's
            with self._lock:
                self.rewritten.append(GroupKeys(partition, target.file_id, records.select([RECORD_KEY])))
        wf = self.ctx.write_base(partition, target.file_id, bucket, merged, target.base_instant, n_data - updates,
                                 updates, is_merge=True, grown_filter=grown, key_range=key_range)
        if base is not None and change_data:
            written = task_change_data(self.storage, self.plan, (partition, target.file_id), base, merged,
                                       self.ctx.write_token, key)
            if written is not None:
                with self._lock:
                    self.change_data.append(written)
        n_del = 0 if dels is None else (base.num_rows if base is not None else 0) + n_data - updates - merged.num_rows
        self.files.append(replace(wf, num_deletes=max(0, n_del)))
