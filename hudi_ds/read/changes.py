"""The change feed (CDC): per commit, the inserts, updates (pre- and post-image) and deletes it made.

A file group whose commit wrote change data (`hoodie.table.cdc.enabled`, the write stat's `cdcStats`) is read from
those files. Any other is inferred: the commit is compared with the commit before it on the file groups it
touched, both states coming from the ordinary merged read, so the feed agrees with snapshots by construction. The
writer derives its change data with the same comparison (`pending_changes`), so both ways give the same rows.
Compaction and clustering commits change no record and yield no rows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CleanedInstantsError, CorruptTableError
from hudi_ds.files.view import FileSlice, Visibility
from hudi_ds.keys.keygen import record_key_strings
from hudi_ds.keys.matching import is_in
from hudi_ds.log import cdc_block as cdc
from hudi_ds.log.format import BlockType, LogBlock, read_blocks
from hudi_ds.merge import LogDeletes, LogVersions, merge_slice
from hudi_ds.read.query import READ_THREADS, TableSnapshot, commits_between
from hudi_ds.read.retention import cleaned, earliest_retained, require_files
from hudi_ds.schema.columns import joined
from hudi_ds.schema.meta import (
    COMMIT_SEQNO,
    COMMIT_TIME,
    FILE_NAME,
    META_COLUMNS,
    PARTITION_PATH,
    RECORD_KEY,
    fit_table,
)
from hudi_ds.schema.strings import constant_strings, decoded, equal_to
from hudi_ds.storage import Storage
from hudi_ds.timeline import Instant
from hudi_ds.timeline.commit_metadata import CommitMetadata

CHANGE_TYPE = "_change_type"
CHANGE_COMMIT_TIME = "_commit_time"  # the change feed's commit column: orders changes, never stored
NO_DATA_OPERATIONS = {"COMPACT", "CLUSTER", "LOG_COMPACT"}


def change_schema(snap: TableSnapshot) -> pa.Schema:
    return feed_schema(pa.schema([f for f in snap.full_schema() if f.name not in META_COLUMNS]))


def feed_schema(data: pa.Schema) -> pa.Schema:
    """The change feed's columns for a table of `data` columns."""
    return pa.schema([pa.field(RECORD_KEY, pa.string()), pa.field(PARTITION_PATH, pa.string()),
                      *[f for f in data if f.name not in META_COLUMNS],
                      pa.field(CHANGE_TYPE, pa.string()), pa.field(CHANGE_COMMIT_TIME, pa.string())])


def _groups_touched(snap: TableSnapshot, inst: Instant) -> set[tuple[str, str]]:
    return _touched(snap.timeline.commit_metadata(inst))


def _touched(meta: CommitMetadata) -> set[tuple[str, str]]:
    groups = {(s.partition_path or "", s.file_id) for s in meta.write_stats() if s.file_id}
    for partition, ids in (meta.partition_to_replace_file_ids or {}).items():
        groups.update((partition, fid) for fid in ids)
    return groups


class _State:
    """The merged rows of file groups as of a commit (nothing before the first commit)."""

    def __init__(self, snap: TableSnapshot, vis: Visibility | None, groups: set[tuple[str, str]],
                 schema: pa.Schema) -> None:
        self.schema = schema
        self.by_group: dict[tuple[str, str], FileSlice] = {}
        if vis is None:
            return
        self.reader = snap.reader(vis, schema)
        self.include_logs = snap.config.is_mor
        partitions = {p for p, _ in groups}
        view = snap.view(vis, partitions.__contains__)
        retained = earliest_retained(snap.timeline)
        if vis.as_of is not None and retained is not None and vis.as_of < retained:
            require_files(view, f"the state of the table as of {vis.as_of}")
        for sl in view.slices_in(sorted(groups)):
            self.by_group[(sl.partition, sl.file_id)] = sl

    @classmethod
    def as_of(cls, snap: TableSnapshot, as_of: str | None, groups: set[tuple[str, str]], schema: pa.Schema) -> _State:
        vis = None if as_of is None else Visibility.of(snap.timeline, as_of, snap.config.layout_version)
        return cls(snap, vis, groups, schema)

    def rows(self, partition: str, groups: set[tuple[str, str]]) -> pa.Table:
        tables = [self.reader.read(sl, self.include_logs) for key, sl in sorted(self.by_group.items())
                  if key[0] == partition and key in groups]
        tables = [t for t in tables if t.num_rows]
        return pa.concat_tables(tables) if tables else self.schema.empty_table()


def _ident(t: pa.Table, key: str) -> pa.Array:
    """A record's identity within one partition (both states are compared a partition at a time)."""
    keys = t[key]
    return keys.combine_chunks() if isinstance(keys, pa.ChunkedArray) else keys


def _tag(t: pa.Table, kind: str, commit: str, out: pa.Schema) -> pa.Table:
    """Change rows of `kind` in the feed's columns (a column a rewrite kept dictionary-encoded decoded)."""
    n = t.num_rows
    cols = [_plain(t[f.name], f.type) if f.name in t.column_names else pa.nulls(n, f.type) for f in out
            if f.name not in (CHANGE_TYPE, CHANGE_COMMIT_TIME)]
    cols += [constant_strings(kind, n), constant_strings(commit, n)]
    return pa.Table.from_arrays(cols, schema=out)


def _plain(column: pa.ChunkedArray, target: pa.DataType) -> pa.ChunkedArray:
    if pa.types.is_dictionary(column.type) and not pa.types.is_dictionary(target):
        return decoded(column, target)
    return column


def compare_states(before: pa.Table, after: pa.Table, commit: str, out: pa.Schema, key: str = RECORD_KEY) -> pa.Table:
    """Rows the commit wrote are inserts or post-images (hash sets built on that small side). A row it did
    not write can still appear (a base version that outranks a re-insert after a delete: an insert) or
    vanish (a delete); the whole states are compared for deletes only when the row counts say so. `key`: the
    column records are matched by, the record key or a column equal to it (the merge key both states were
    merged by). The rows the commit did not write are never copied: only masks over `after` are built."""
    parts = states_by_kind(before, after, commit, key)
    return pa.concat_tables([_tag(rows, kind, commit, out) for rows, kind in zip(parts, _KINDS, strict=True)])


_KINDS = ("update_preimage", "update_postimage", "insert", "insert", "delete")


def states_by_kind(before: pa.Table, after: pa.Table, commit: str, key: str) -> tuple[pa.Table, ...]:
    """compare_states' rows by kind, untagged (in their states' columns): pre-images, post-images, the inserts
    the commit wrote, rows that reappeared, deletes (each in the order of its state's rows)."""
    now = equal_to(after[COMMIT_TIME], commit)
    changed = _where(after, now)
    changed_id, b_id = _ident(changed, key), _ident(before, key)
    pre = _where(before, is_in(b_id, changed_id))
    is_update = is_in(changed_id, _ident(pre, key))
    post = _where(changed, is_update)
    new_here = pc.invert(pc.or_(now, is_in(_ident(after, key), b_id)))
    reappeared = _where(after, new_here)
    kept = after.num_rows - changed.num_rows
    if before.num_rows - pre.num_rows == kept - reappeared.num_rows:
        deletes = before.schema.empty_table()
    else:
        deletes = before.filter(pc.invert(is_in(b_id, _ident(after, key))))
    return pre, post, _where(changed, pc.invert(is_update)), reappeared, deletes


def _where(table: pa.Table, mask: pa.Array | pa.ChunkedArray) -> pa.Table:
    """`table.filter(mask)`, without copying a row when the mask keeps all rows or none (a commit's states mostly
    hold only rows it wrote)."""
    chunks = mask.chunks if isinstance(mask, pa.ChunkedArray) else [mask]
    kept = sum(c.true_count for c in chunks)
    if kept == table.num_rows:
        return table
    return table.slice(0, 0) if kept == 0 else table.filter(mask)


def touched_groups(snap: TableSnapshot, commits: list[str]) -> set[tuple[str, str]]:
    by_time = {c.requested_time: c for c in snap.timeline.commits()}
    out: set[tuple[str, str]] = set()
    for ts in commits:
        if ts in by_time:
            out |= _groups_touched(snap, by_time[ts])
    return out


def previous_commit(snap: TableSnapshot, ts: str) -> str | None:
    order = [c.requested_time for c in snap.timeline.commits()]
    pos = order.index(ts)
    return order[pos - 1] if pos > 0 else None


def _for_commit(snap: TableSnapshot, ts: str) -> TableSnapshot:
    """The snapshot that knows commit `ts` and the commit before it (archived ones included)."""
    snap = snap.reaching(ts)
    commits = [c.requested_time for c in snap.timeline.commits()]
    if ts not in commits or commits.index(ts) == 0:  # archived, or the commit before it is
        snap = snap.with_history()
    return snap


def commit_changes(snap: TableSnapshot, ts: str, groups: set[tuple[str, str]] | None = None) -> pa.Table:
    """The change rows of one commit (optionally only for some of its file groups)."""
    snap = _for_commit(snap, ts)
    inst = next((c for c in snap.timeline.commits() if c.requested_time == ts), None)
    if inst is None:
        raise CleanedInstantsError(
            f"commit {ts} is on neither the active nor the archived timeline (rolled back, or its archive was "
            "removed); its changes cannot be read. Read from a later commit")
    out = change_schema(snap)
    meta = snap.timeline.commit_metadata(inst)
    if meta.operation_type in NO_DATA_OPERATIONS:
        return out.empty_table()
    groups = _touched(meta) if groups is None else groups
    # the change rows' columns, and the commit time that tells which rows the commit wrote
    schema = pa.schema([f for f in snap.full_schema() if f.name not in (COMMIT_SEQNO, FILE_NAME)])
    recorded = recorded_change_files(meta, groups)
    previous = previous_commit(snap, ts)
    # each state is built when first needed (change data of every group needs neither)
    before = _once(lambda: _State.as_of(snap, previous, groups, schema))
    after = _once(lambda: _State.as_of(snap, ts, groups, schema))
    tables = [read_change_files(snap, ts, recorded, out, before, after)] if recorded else []
    rest = groups - set(recorded)
    if rest:
        tables += _inferred(snap, before(), after(), ts, rest, out).values()
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else out.empty_table()


def require_readable(snap: TableSnapshot, ts: str) -> None:
    """CleanedInstantsError now, reading no data, if `commit_changes(snap, ts)` would need file versions cleaning
    removed: the commit's change-data files, or the states before and after it that they leave out (for a planner
    that must not fail later in a task)."""
    snap = _for_commit(snap, ts)
    retained = earliest_retained(snap.timeline)
    inst = next((c for c in snap.timeline.commits() if c.requested_time == ts), None)
    if retained is None or inst is None:
        return  # nothing was cleaned, or commit_changes names the commit that is gone
    previous = previous_commit(snap, ts)
    if (previous or ts) >= retained:
        return
    meta = snap.timeline.commit_metadata(inst)
    if meta.operation_type in NO_DATA_OPERATIONS:
        return
    groups = _touched(meta)
    recorded = recorded_change_files(meta, groups)
    gone = [rel for files in recorded.values() for rel in sorted(files) if not snap.storage.exists(rel)]
    if gone and ts < retained:
        raise cleaned(f"the change data of commit {ts}", retained, f"{', '.join(gone)} no longer exist")
    mode, inferred = snap.config.cdc_mode, bool(groups - set(recorded))
    schema = snap.full_schema()
    if previous is not None and (inferred or mode == "OP_KEY_ONLY"):
        _State.as_of(snap, previous, groups, schema)  # checks the files of the state (see _State)
    if inferred or mode != "DATA_BEFORE_AFTER":
        _State.as_of(snap, ts, groups, schema)


def pending_changes(snap: TableSnapshot, instant: str, groups: set[tuple[str, str]],
                    out: pa.Schema) -> dict[tuple[str, str], pa.Table]:
    """The change rows per file group of `instant`, a commit whose files are written but which is not on the
    timeline yet (its writer records them as change data before publishing it)."""
    vis = Visibility.of(snap.timeline, None, snap.config.layout_version)
    schema = pa.schema([f for f in out if f.name not in (CHANGE_TYPE, CHANGE_COMMIT_TIME)]
                       + [pa.field(COMMIT_TIME, pa.string())])
    before = _State(snap, vis if snap.timeline.commits() else None, groups, schema)
    after = _State(snap, vis.with_pending(instant), groups, schema)
    return _inferred(snap, before, after, instant, groups, out, per_group=True)


def _inferred(snap: TableSnapshot, before: _State, after: _State, ts: str, groups: set[tuple[str, str]],
              out: pa.Schema, per_group: bool = False) -> dict[tuple[str, str], pa.Table]:
    """The changes of commit `ts` found by comparing the states before and after it, per partition (an overwrite
    moves keys to new file groups of the partition: a key it rewrites is an update), or with `per_group` (a
    write that keeps every key in its file group) per file group."""
    # a merge-on-read group whose commit only added log blocks to the slice it had: both states come from one
    # read of that slice, and only the keys the commit wrote can differ between them
    in_place = {key for key, sl in after.by_group.items() if snap.config.is_mor and key in before.by_group
                and _same_base(before.by_group[key], sl)}
    units: dict[tuple[str, str], set[tuple[str, str]]] = {}
    for g in groups:
        units.setdefault(g if per_group or g in in_place else (g[0], ""), set()).add(g)

    def unit_changes(unit: tuple[str, str]) -> pa.Table | _Written | None:
        if unit in in_place:
            return _log_commit_states(after, after.by_group[unit], ts)
        members = units[unit]
        return compare_states(before.rows(unit[0], members), after.rows(unit[0], members), ts, out)

    ordered = sorted(units)
    with ThreadPoolExecutor(min(READ_THREADS, max(1, len(ordered)))) as pool:
        return _settled(dict(zip(ordered, pool.map(unit_changes, ordered), strict=True)), ts, out)


def recorded_change_files(meta: CommitMetadata, groups: set[tuple[str, str]]) -> dict[tuple[str, str], dict[str, int]]:
    """The change-data files a commit lists (path -> size in bytes), per file group (of `groups`)."""
    out: dict[tuple[str, str], dict[str, int]] = {}
    for stat in meta.write_stats():
        key = (stat.partition_path or "", stat.file_id)
        if key in groups and stat.cdc_paths():
            out.setdefault(key, {}).update({rel: _size(stat.cdc_stats[rel]) for rel in stat.cdc_paths()})
    return out


def _size(value: object) -> int:
    return value if isinstance(value, int) and value > 0 else 0


def _once(build: Callable[[], _State]) -> Callable[[], _State]:
    """`build` run on the first call only, whichever of the threads decoding change data makes it first."""
    lock, built = threading.Lock(), list[_State]()

    def get() -> _State:
        with lock:
            if not built:
                built.append(build())
            return built[0]

    return get


_BATCH_BYTES = 8 << 20
_SPLIT_BYTES = 1 << 20  # change data below this decodes in one run: a second run's call and thread cost more


def _batches(recorded: dict[tuple[str, str], dict[str, int]], runs: int) -> list[list[tuple[str, str]]]:
    """File groups in order, in runs of about _BATCH_BYTES of change data at most (one decode per run: small
    enough to bound the working set, big enough that the per-call costs do not add up over many small groups),
    and in `runs` runs or more when there is enough of it (the runs decode on as many threads)."""
    sizes = {group: sum(recorded[group].values()) or _BATCH_BYTES for group in recorded}
    limit = min(_BATCH_BYTES, max(_SPLIT_BYTES, -(-sum(sizes.values()) // max(1, runs))))
    out: list[list[tuple[str, str]]] = []
    size = limit
    for group in sorted(recorded):
        if size >= limit:
            out.append([])
            size = 0
        out[-1].append(group)
        size += sizes[group]
    return out


def read_change_files(snap: TableSnapshot, ts: str, recorded: dict[tuple[str, str], dict[str, int]],
                      out: pa.Schema, before: Callable[[], _State], after: Callable[[], _State]) -> pa.Table:
    """The change rows of file groups from the change data their commit wrote (hudi_ds.log.cdc_block), decoded
    a few megabytes at a time on READ_THREADS threads. Images the supplemental logging mode leaves out come from
    the groups' states around the commit."""
    data_schema = pa.schema([f for f in out if f.name not in (RECORD_KEY, PARTITION_PATH, CHANGE_TYPE,
                                                               CHANGE_COMMIT_TIME)])

    def batch_changes(groups: list[tuple[str, str]]) -> list[pa.Table]:
        entries = [(group[0], rel) for group in groups for rel in sorted(recorded[group])]
        records = read_cdc_records(snap.storage, entries)
        retained = earliest_retained(snap.timeline)
        if records is None and retained is not None and ts < retained:
            raise cleaned(f"the change data of commit {ts}", retained,
                          f"{', '.join(r for _, r in entries)} no longer exist")
        if records is None:
            raise CorruptTableError(f"a change-data file of commit {ts} ({', '.join(r for _, r in entries)}) is "
                                    "missing; restore it, or roll back that commit")
        present = set(records.column_names)

        def picked(kind: str, *image_columns: str) -> pa.Table:
            """The records of `kind` with the columns its change rows are made of only (an insert's null
            `before` image is as many null children as data columns: filtering it is waste)."""
            keep = [c for c in (cdc.RECORD_KEY, _PARTITION, *image_columns) if c in present]
            return records.select(keep).filter(pc.equal(records[cdc.OP], kind))

        def images(rows: pa.Table, column: str) -> pa.Table:
            """The `before`/`after` images of `rows` as change rows (data columns in the feed's types)."""
            struct = rows[column].combine_chunks()
            table = pa.Table.from_arrays(struct.flatten(), names=[f.name for f in struct.type])
            keys = (rows[cdc.RECORD_KEY] if cdc.RECORD_KEY in rows.column_names
                    else record_key_strings(table, snap.config.record_key_fields))
            table = fit_table(table, data_schema, entries[0][1])
            return table.append_column(RECORD_KEY, keys).append_column(PARTITION_PATH, rows[_PARTITION])

        def from_state(state: _State, rows: pa.Table) -> pa.Table:
            found = []
            for partition in sorted(set(rows[_PARTITION].to_pylist())):
                here = state.rows(partition, {g for g in groups if g[0] == partition})
                keys = rows.filter(pc.equal(rows[_PARTITION], partition))[cdc.RECORD_KEY]
                found.append(here.filter(pc.is_in(here[RECORD_KEY], value_set=keys)))
            return pa.concat_tables(found) if found else state.schema.empty_table()

        ins, dels = picked(cdc.INSERT, cdc.AFTER), picked(cdc.DELETE, cdc.BEFORE)
        upd = picked(cdc.UPDATE, cdc.BEFORE, cdc.AFTER)
        if cdc.AFTER in present:
            post, added = images(upd, cdc.AFTER), images(ins, cdc.AFTER)
        else:
            post, added = from_state(after(), upd), from_state(after(), ins)
        if cdc.BEFORE in present:
            pre, gone = images(upd, cdc.BEFORE), images(dels, cdc.BEFORE)
        else:
            pre, gone = from_state(before(), upd), from_state(before(), dels)
        return [_tag(pre, "update_preimage", ts, out), _tag(post, "update_postimage", ts, out),
                _tag(added, "insert", ts, out), _tag(gone, "delete", ts, out)]

    batches = _batches(recorded, READ_THREADS)
    with ThreadPoolExecutor(min(READ_THREADS, len(batches))) as pool:  # the decoders release the GIL
        parts = list(pool.map(batch_changes, batches))
    # by kind of change, then file group: the same order however the groups were batched
    return pa.concat_tables([batch[kind] for kind in range(4) for batch in parts])


_PARTITION = "__partition"


def read_cdc_records(storage: Storage, entries: list[tuple[str, str]]) -> pa.Table | None:
    """The records of change-data files ((partition, path) pairs; their CDC blocks in file order), with each
    record's partition in a column of its own; None if a file is missing."""
    blocks: list[tuple[str, LogBlock]] = []
    partitions: list[str] = []
    for partition, rel in entries:
        try:
            data = storage.read_bytes(rel)
        except FileNotFoundError:
            return None
        for block in read_blocks(data, rel):
            if block.block_type == BlockType.CORRUPT:
                raise CorruptTableError(f"change-data file {rel} has a truncated or corrupt block at byte "
                                        f"{block.offset}; restore the file or roll back the commit that lists it")
            if block.block_type == BlockType.CDC_DATA:
                blocks.append((rel, block))
                partitions.append(partition)
    if not blocks:
        return pa.table({cdc.OP: pa.array([], pa.string()), _PARTITION: pa.array([], pa.string())})
    records = cdc.decode_cdc_blocks(blocks)
    counts = [cdc.record_count(b) for _, b in blocks]
    if sum(counts) != records.num_rows:
        raise CorruptTableError(f"change-data files {sorted({r for r, _ in blocks})} hold {records.num_rows} records "
                                f"where their blocks announce {sum(counts)}")
    names = sorted(set(partitions))
    index = {p: i for i, p in enumerate(names)}
    codes = np.repeat(np.array([index[p] for p in partitions], dtype=np.int32), counts)
    column = pa.DictionaryArray.from_arrays(pa.array(codes), pa.array(names, pa.string())).cast(pa.string())
    return records.append_column(_PARTITION, column)


def _same_base(a: FileSlice, b: FileSlice) -> bool:
    return (a.base_file.path if a.base_file else None) == (b.base_file.path if b.base_file else None)


@dataclass(frozen=True)
class _Written:
    """The states of the records a commit wrote into a slice's logs, before and after it, each row with its key's
    place among the `written` keys the commit wrote there (both states hold those keys only)."""

    before: pa.Table
    after: pa.Table
    before_at: np.ndarray
    after_at: np.ndarray
    written: int


def _log_commit_states(state: _State, sl: FileSlice, ts: str) -> _Written | None:
    """The states around commit `ts` of a slice whose base it left alone (None: it wrote no record there): the
    slice is read once, and the states before and after the commit are merged for the keys its log blocks name
    only (matched by the reader's merge key, an integer column where the key generator allows)."""
    reader = state.reader
    key_field = reader.merge_key
    data, deletes = reader.read_logs(sl)
    deletes = reader.by_merge_key(deletes)
    rank = reader.visibility.order_key(ts)
    written = [] if data is None else [pc.filter(data.table[key_field], pa.array(data.rank == rank))]
    if deletes is not None:
        written.append(pc.filter(deletes.keys, pa.array(deletes.rank == rank)))
    key_type = reader.schema.field(key_field).type
    keys = joined(written, key_type)
    if len(keys) == 0:
        return None
    base = reader.read_base_keys(sl, keys)
    ordering, schema = reader.ordering_field, reader.schema

    def merged(before: bool) -> pa.Table:
        return merge_slice(base, _versions(data, key_field, keys, rank, before),
                           _deletes(deletes, keys, rank, before), ordering, schema, key_field=key_field,
                           partial=reader.partial, first_value=reader.first_value)

    return _written_states(merged(True), merged(False), keys.combine_chunks(), key_field)


def _written_states(before: pa.Table, after: pa.Table, keys: pa.Array, key: str) -> _Written:
    """The states of a slice around a commit that wrote `keys` there (both states hold those keys only)."""
    # Arrow's hash lookup: a few thousand keys cost less hashed than sorted (keys.matching.index_in)
    at = pc.index_in(joined([before[key], after[key]], keys.type), value_set=keys)
    if at.null_count:
        raise AssertionError("a state holds a key the commit did not write")
    places = at.to_numpy()
    return _Written(before, after, places[:before.num_rows], places[before.num_rows:], len(keys))


def _settled(found: dict[tuple[str, str], pa.Table | _Written | None], ts: str,
             out: pa.Schema) -> dict[tuple[str, str], pa.Table]:
    """The change rows of every unit, in unit order (the states of slices a commit only logged into compared all
    at once)."""
    rows = {unit: out.empty_table() if found_rows is None else found_rows for unit, found_rows in found.items()
            if not isinstance(found_rows, _Written)}
    logged = [(unit, found_rows) for unit, found_rows in found.items() if isinstance(found_rows, _Written)]
    if logged:
        rows.update(zip([unit for unit, _ in logged], _compare_written([w for _, w in logged], ts, out),
                        strict=True))
    return {unit: rows[unit] for unit in sorted(rows)}


def _compare_written(states: list[_Written], commit: str, out: pa.Schema) -> list[pa.Table]:
    """compare_states of each slice's states, in one comparison of them all (a commit's few thousand rows per
    slice cost more in calls than in rows). A row is known by its slice and its key's place among the keys the
    commit wrote there, so each mask is a lookup in a table of one flag per written key; each kind's rows come in
    slice order and are sliced back per slice, in the order comparing each slice alone gives."""
    starts = np.cumsum([0] + [w.written for w in states])[:-1]
    before = pa.concat_tables([w.before for w in states])
    after = pa.concat_tables([w.after for w in states])
    b_at = np.concatenate([w.before_at + start for w, start in zip(states, starts, strict=True)])
    a_at = np.concatenate([w.after_at + start for w, start in zip(states, starts, strict=True)])
    places = int(starts[-1]) + states[-1].written
    times = equal_to(after[COMMIT_TIME], commit)
    now = _flags(pc.fill_null(times, False))
    timed = _flags(pc.is_valid(times))  # a row without a commit time is neither written now nor reappeared
    written, held, kept = (np.zeros(places, dtype=bool) for _ in range(3))
    written[a_at[now]] = True
    held[b_at] = True
    kept[a_at] = True
    was_held = held[a_at]
    masks = [(before, written[b_at]), (after, now & was_held), (after, now & ~was_held),
             (after, timed & ~now & ~was_held), (before, ~kept[b_at])]
    b_rows = np.cumsum([0] + [w.before.num_rows for w in states])
    a_rows = np.cumsum([0] + [w.after.num_rows for w in states])
    tagged, bounds = [], []
    for (table, mask), kind in zip(masks, _KINDS, strict=True):
        tagged.append(_tag(_where(table, pa.array(mask)), kind, commit, out))
        bounds.append(np.concatenate([[0], np.cumsum(mask)])[b_rows if table is before else a_rows])
    return [pa.concat_tables([t.slice(at[i], at[i + 1] - at[i]) for t, at in zip(tagged, bounds, strict=True)])
            for i in range(len(states))]


def _flags(mask: pa.Array | pa.ChunkedArray) -> np.ndarray:
    return np.asarray(mask.to_numpy(zero_copy_only=False) if isinstance(mask, pa.Array) else mask.to_numpy(),
                      dtype=bool)


def _versions(data: LogVersions | None, key_field: str, keys: pa.ChunkedArray, rank: int,
              before: bool) -> LogVersions | None:
    """The log rows of `keys` up to the commit of `rank` (before it, with `before`)."""
    if data is None:
        return None
    picked = _picked(data.table[key_field], keys, data.rank, rank, before)
    if picked is None or not picked.any():
        return data if picked is None else None
    absent = None if data.absent is None else {c: rows[picked] for c, rows in data.absent.items()}
    return LogVersions(data.table.filter(pa.array(picked)), data.rank[picked], data.position[picked], absent)


def _deletes(deletes: LogDeletes | None, keys: pa.ChunkedArray, rank: int, before: bool) -> LogDeletes | None:
    if deletes is None:
        return None
    picked = _picked(deletes.keys, keys, deletes.rank, rank, before)
    if picked is None or not picked.any():
        return deletes if picked is None else None
    mask = pa.array(picked)
    return LogDeletes(pc.filter(deletes.keys, mask), pc.filter(deletes.ordering, mask), deletes.natural[picked],
                      deletes.rank[picked], deletes.position[picked])


def _picked(column: pa.Array | pa.ChunkedArray, keys: pa.ChunkedArray, ranks: np.ndarray, rank: int,
            before: bool) -> np.ndarray | None:
    """Which log rows are versions of `keys` up to the commit of `rank` (before it, with `before`); None: all.
    The commit's own rows are versions of `keys` (they are made of them): only earlier rows are looked up."""
    earlier = ranks < rank
    picked = np.zeros(len(ranks), dtype=bool) if before else ranks == rank
    if earlier.any():
        rows = np.flatnonzero(earlier)
        found = is_in(pc.take(column, pa.array(rows)), keys)
        picked[rows[np.asarray(found.to_numpy(zero_copy_only=False), dtype=bool)]] = True
    return None if picked.all() else picked


def iter_changes(snap: TableSnapshot, start: str, end: str | None = None) -> Iterator[pa.Table]:
    """One table of change rows per commit in (start, end], in commit order."""
    snap = snap.reaching(start)
    for ts in commits_between(snap, start, end):
        yield commit_changes(snap, ts)


def changes(snap: TableSnapshot, start: str, end: str | None = None) -> pa.Table:
    tables = list(iter_changes(snap, start, end))
    return pa.concat_tables(tables) if tables else change_schema(snap).empty_table()
