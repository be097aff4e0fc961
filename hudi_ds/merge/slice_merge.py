"""The merge rule of a file slice, as Apache Hudi applies it (DefaultHoodieRecordPayload /
EVENT_TIME_ORDERING), vectorised with pyarrow.compute.

Log versions of a key fold in log order: a data version replaces the current one unless the current
one has a higher ordering value (ties go to the later version); an event-time delete does the same;
a *natural* delete (ordering value null or integer 0 — what Spark and hudi_ds write) always replaces
it. Folding "replace unless higher" is a maximum over (ordering, position) among the versions after
the last natural delete, the natural delete itself counting as the lowest ordering value.
The folded log version then meets the base file's row: a delete removes it; a data version replaces it
unless the base row has a strictly higher ordering value. Without an ordering field the later version
always wins: that is COMMIT_TIME_ORDERING, whose callers pass none (TableConfig.merge_ordering_field). Java Hudi
and hudi-rs give the same answers on event-time tables written this way.
Under FirstValueAvroPayload (`first_value`) a data version does not replace one with an equal ordering value (the
earlier log version, the base row stay); a delete still does (Hudi's delete records replace unless the current
version's ordering value is strictly higher, whatever the payload).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.merge.partial import PartialUpdate, fold_partial
from hudi_ds.schema.meta import META_COLUMNS, RECORD_KEY
from hudi_ds.schema.strings import alike_dictionaries, expand_dictionaries


@dataclass(frozen=True)
class LogVersions:
    """Data rows from one or more log blocks, in log order, with their commit rank."""

    table: pa.Table
    rank: np.ndarray  # commit order of each row's block (higher = later)
    position: np.ndarray  # global position among log rows (block order, then row)
    absent: dict[str, np.ndarray] | None = None  # column -> rows whose (IS_PARTIAL) block did not carry it


@dataclass(frozen=True)
class LogDeletes:
    keys: pa.Array
    ordering: pa.Array  # typed like the ordering field; nulls where unknown
    natural: np.ndarray  # bool
    rank: np.ndarray
    position: np.ndarray  # global position among log rows, to order against data rows


def _versions_table(data: LogVersions | None, deletes: LogDeletes | None, ordering_field: str | None,
                    ord_type: pa.DataType, key_field: str, key_type: pa.DataType) -> pa.Table:
    """One small table of every log version: key, ord, natural, is_delete, rank, pos, row."""
    parts = []
    if data is not None and data.table.num_rows:
        n = data.table.num_rows
        ordv = pc.cast(data.table[ordering_field], ord_type) if ordering_field else pa.nulls(n, ord_type)
        parts.append(pa.table({
            "key": data.table[key_field],
            "ord": ordv,
            "natural": pa.array(np.zeros(n, dtype=bool)),
            "is_delete": pa.array(np.zeros(n, dtype=bool)),
            "rank": pa.array(data.rank.astype(np.int64)),
            "pos": pa.array(data.position.astype(np.int64)),
            "row": pa.array(np.arange(n, dtype=np.int64)),
        }))
    if deletes is not None and len(deletes.keys):
        n = len(deletes.keys)
        natural = pa.array(deletes.natural.astype(bool))
        ordv = pc.if_else(natural, pa.nulls(n, ord_type), pc.cast(deletes.ordering, ord_type))
        parts.append(pa.table({
            "key": pc.cast(deletes.keys, key_type),
            "ord": ordv,
            "natural": natural,
            "is_delete": pa.array(np.ones(n, dtype=bool)),
            "rank": pa.array(deletes.rank.astype(np.int64)),
            "pos": pa.array(deletes.position.astype(np.int64)),
            "row": pa.array(np.full(n, -1, dtype=np.int64)),
        }))
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


_FOLD_COLUMNS = ["key", "ord", "natural", "is_delete", "rank", "pos"]  # what a fold looks at


def _log_winners(versions: pa.Table, ordered: bool, first_value: bool = False) -> pa.Table:
    """The folded log version of every key: only keys with several versions are folded, the others (most of
    them, even when a delete meets an upsert) pass as they are."""
    repeated_keys = _repeated(versions["key"])
    if len(repeated_keys) == 0:
        return versions  # one version per key (the common case): nothing to fold
    candidates = np.flatnonzero(np.asarray(pc.is_in(versions["key"], value_set=repeated_keys), dtype=bool))
    keep = np.ones(versions.num_rows, dtype=bool)
    keep[candidates] = False
    keep[candidates[_fold(versions.select(_FOLD_COLUMNS).take(candidates), ordered, first_value)]] = True
    return versions.filter(pa.array(keep))


def _repeated(keys: pa.ChunkedArray) -> pa.Array:
    """The keys that occur more than once (integer keys sorted by NumPy, ten times faster than Arrow's hash
    kernels on a slice's few thousand log versions)."""
    if pa.types.is_integer(keys.type):
        ordered = np.sort(keys.to_numpy())
        return pa.array(np.unique(ordered[1:][ordered[1:] == ordered[:-1]]), keys.type)
    counts = pc.value_counts(keys)
    return pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))


def _fold(versions: pa.Table, ordered: bool, first_value: bool = False) -> np.ndarray:
    """The rows of `versions` that win their key's fold (see the module docstring), by NumPy sorts of small
    integer codes: the key's group, the version's place in log order, the rank of its ordering value. Among the
    versions of the top ordering value the last wins; under `first_value` the last delete, else the first data
    version (what folding them one by one under that rule leaves)."""
    n = versions.num_rows
    group = np.asarray(pc.dictionary_encode(versions["key"].combine_chunks(), null_encoding="encode").indices)
    log_order = np.empty(n, dtype=np.int64)
    log_order[np.lexsort((np.asarray(versions["pos"]), np.asarray(versions["rank"])))] = np.arange(n)
    natural = np.asarray(versions["natural"], dtype=bool)
    last_natural = np.full(int(group.max()) + 1, -1, dtype=np.int64)
    np.maximum.at(last_natural, group[natural], log_order[natural])
    live = np.flatnonzero(log_order >= last_natural[group])  # a natural delete and the versions after it
    ord_rank = (np.asarray(pc.rank(versions["ord"], sort_keys=[("", "ascending", "at_start")], tiebreaker="dense"))
                if ordered else np.zeros(n, dtype=np.uint64))  # nulls (natural deletes among them) lowest
    if first_value:
        is_delete = np.asarray(versions["is_delete"], dtype=bool)
        tie_order = np.where(is_delete, log_order, -log_order)
        order = live[np.lexsort((tie_order[live], is_delete[live], ord_rank[live], group[live]))]
    else:
        order = live[np.lexsort((log_order[live], ord_rank[live], group[live]))]
    ends = np.append(group[order][1:] != group[order][:-1], True)
    return order[ends]


# widest key range looked up through a table of one byte per value (numpy's isin "table" kind), 4 MiB
_TABLE_SPAN = 1 << 22


def _met(base_keys: pa.ChunkedArray | pa.Array, winner_keys: pa.ChunkedArray | pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """The base rows whose key has a log version, and the index of that version among the (distinct) winner
    keys. Integer keys are found by a binary search of the base when its keys rise row by row, else (within a few
    million of each other) looked up in a byte table and found by a binary search of the few met (about three
    times faster than Arrow's hash lookup on a slice); others by hashing."""
    if (pa.types.is_integer(base_keys.type) and base_keys.type == winner_keys.type and len(winner_keys)
            and not base_keys.null_count and not winner_keys.null_count):
        wanted, keys = winner_keys.to_numpy(), base_keys.to_numpy()
        if len(keys) and bool(np.all(keys[1:] > keys[:-1])):
            # keys rising row by row (a file group first written from input in key order, as bulk loads often
            # are): search the base for the sorted winner keys, which finds the met rows in order
            order = np.argsort(wanted)
            at = np.minimum(np.searchsorted(keys, wanted[order]), len(keys) - 1)
            found = keys[at] == wanted[order]
            return at[found], order[found]
        if int(wanted.max()) - int(wanted.min()) <= _TABLE_SPAN:
            met = np.flatnonzero(np.isin(keys, wanted, kind="table"))
            order = np.argsort(wanted)
            return met, order[np.searchsorted(wanted[order], keys[met])]
    idx = pc.index_in(base_keys, value_set=winner_keys)
    met_rows = pc.indices_nonzero(pc.is_valid(idx))
    return (met_rows.to_numpy().astype(np.int64),
            pc.take(idx, met_rows).to_numpy(zero_copy_only=False).astype(np.int64))


@dataclass(frozen=True)
class MergeCounts:
    """What a merge did to the base rows, for a compaction's write stats (no second pass over the keys)."""

    base_rows_met: int  # base rows a log version of their key meets (replaced, deleted, or kept by ordering)
    base_rows_deleted: int
    log_keys: int  # distinct keys among the log versions and deletes
    base_rows_kept: int = 0  # base rows kept over the data version meeting them (a higher ordering value)


def merge_slice(base: pa.Table | None, data: LogVersions | None, deletes: LogDeletes | None,
                ordering_field: str | None, schema: pa.Schema, **options: Any) -> pa.Table:
    """The latest image of every live record of one file slice (see merge_slice_counted)."""
    return merge_slice_counted(base, data, deletes, ordering_field, schema, **options)[0]


def merge_slice_counted(
    base: pa.Table | None,
    data: LogVersions | None,
    deletes: LogDeletes | None,
    ordering_field: str | None,
    schema: pa.Schema,
    base_keys_only: bool = False,
    key_field: str = RECORD_KEY,
    keep_dictionaries: bool = False,
    partial: PartialUpdate | None = None,
    first_value: bool = False,
    in_place: bool = False,
) -> tuple[pa.Table, MergeCounts]:
    """The latest image of every live record of one file slice, as a table of `schema`, and what the merge
    did to the base rows.

    `base_keys_only`: `base` is one part of the slice's base file; emit log records only for its keys.
    `key_field`: the column records are matched by, the record key or a column equal to it (delete keys typed
    like it). `keep_dictionaries`: the base columns read as dictionaries stay so, and the log rows joining them
    are encoded alike (else they are expanded). `partial`: the table's partial update mode (hudi_ds.merge.partial),
    under which versions give only some cells. `first_value`: FirstValueAvroPayload's ties (module docstring).
    `in_place`: a log version that replaces a base row takes that row's place, the log's new keys follow in log
    order, as Hudi's merge handle writes a compaction's file (a file in key order stays so, and compresses as
    well); else the base rows that stay come first, then the log rows (a reader's order does not matter)."""
    no_log = (data is None or data.table.num_rows == 0) and (deletes is None or len(deletes.keys) == 0)
    if no_log:
        return (base if base is not None else schema.empty_table()), MergeCounts(0, 0, 0)
    ord_type = schema.field(ordering_field).type if ordering_field else pa.int64()
    typed = data.table if data is not None else base
    key_type = typed.schema.field(key_field).type if typed is not None else pa.string()
    if partial is not None and data is not None and data.table.num_rows:
        versions = _versions_table(data, deletes, ordering_field, ord_type, key_field, key_type)
        return _merge_partial(base, data, versions, ordering_field, ord_type, partial, key_field, base_keys_only,
                              in_place)
    winners = _log_winners(_versions_table(data, deletes, ordering_field, ord_type, key_field, key_type),
                           ordering_field is not None, first_value)
    out: list[pa.Table] = []
    keep_log = pc.invert(winners["is_delete"])
    if base_keys_only:
        own = base[key_field].combine_chunks() if base is not None else pa.array([], key_type)
        keep_log = pc.and_(keep_log, pc.is_in(winners["key"], value_set=own))
    met_count = deleted = kept = 0
    slots: list[np.ndarray] = []  # each output row's place with in_place (base position; new keys after the base)
    replaced = np.full(winners.num_rows, -1, dtype=np.int64)  # the base position a winner replaces
    if base is not None and base.num_rows:
        met, version = _met(base[key_field], winners["key"])
        base_keep = np.ones(base.num_rows, dtype=bool)
        base_keep[met] = False
        met_is_delete = pc.take(winners["is_delete"], version)
        if ordering_field is not None and len(met):
            # only base rows a log version meets are compared (a tenth of the rows in a typical upsert)
            outranks = pc.greater_equal if first_value else pc.greater
            base_wins = pc.and_(
                pc.invert(met_is_delete),
                pc.fill_null(outranks(pc.cast(pc.take(base[ordering_field], met), ord_type),
                                        pc.take(winners["ord"], version)), False),
            )
            if pc.any(base_wins).as_py():
                winning = met[np.asarray(base_wins.to_numpy(zero_copy_only=False), dtype=bool)]
                base_keep[winning] = True
                kept = len(winning)
                beaten = pc.is_in(winners["key"], value_set=pc.take(base[key_field], winning))
                keep_log = pc.and_(keep_log, pc.invert(beaten))
        met_count, deleted = len(met), int(pc.sum(met_is_delete).as_py() or 0)  # a delete beats any base row
        out.append(base.filter(pa.array(base_keep)))
        if in_place:
            slots.append(np.flatnonzero(base_keep))
            replaced[version] = met  # read only where the winner is kept: a data version the base did not beat
    if data is not None:
        rows = pc.filter(winners["row"], keep_log)
        if len(rows):
            out.append(_log_rows(data.table, rows))
            if in_place:
                slots.append(_after_base(replaced[np.flatnonzero(keep_log.to_numpy(zero_copy_only=False))],
                                         base.num_rows if base is not None else 0))
    counts = MergeCounts(met_count, deleted, winners.num_rows, kept)
    if len(out) > 1 and keep_dictionaries:
        out = alike_dictionaries(out)
    elif len(out) > 1:
        out[0] = expand_dictionaries(out[0], out[1].schema)  # base columns read as dictionaries
    if not out:
        return schema.empty_table(), counts
    merged = pa.concat_tables(out) if len(out) > 1 else out[0]
    return (_in_slot_order(merged, slots) if in_place else merged), counts


def _after_base(replaced: np.ndarray, n_base: int) -> np.ndarray:
    """Slots of log rows: the base position each replaces, else (a new key) after the base, in log order."""
    new = replaced < 0
    out = replaced.copy()
    out[new] = n_base + np.arange(int(new.sum()), dtype=np.int64)
    return out


def _in_slot_order(merged: pa.Table, slots: list[np.ndarray]) -> pa.Table:
    """`merged` (whose rows have the concatenated `slots`) reordered by slot; untouched when already in order."""
    order = np.concatenate(slots) if slots else np.zeros(0, dtype=np.int64)
    if len(order) < 2 or bool(np.all(order[1:] > order[:-1])):
        return merged
    return merged.take(pa.array(np.argsort(order, kind="stable")))


def _log_rows(table: pa.Table, rows: pa.Array) -> pa.Table:
    """The rows `rows` (rising: the winners keep log order) of the log versions, by a mask: a filter works chunk
    by chunk, where a take of a chunked string column first concatenates every log block's chunk."""
    if len(rows) == table.num_rows:
        return table
    mask = np.zeros(table.num_rows, dtype=bool)
    mask[np.asarray(rows)] = True
    return table.filter(pa.array(mask))


def _merge_partial(base: pa.Table | None, data: LogVersions, versions: pa.Table, ordering_field: str | None,
                   ord_type: pa.DataType, partial: PartialUpdate, key_field: str,
                   base_keys_only: bool, in_place: bool) -> tuple[pa.Table, MergeCounts]:
    """merge_slice_counted of a table whose versions give some cells only (hudi_ds.merge.partial): the folded log
    version of each key meets its base row cell by cell, the winner's cells where it gives them, else the loser's."""
    table = data.table
    gives = {c: partial.gives(table, c, (data.absent or {}).get(c)) for c in table.column_names}
    folded = fold_partial(versions, gives, ordering_field is not None, frozenset(META_COLUMNS))
    is_data = folded.row >= 0
    log_rows = is_data.copy()

    def log_cells(column: str, picks: np.ndarray) -> pa.Array:
        """The folded version's cells; one that no version gives keeps the winning row's own (a marker, a null)."""
        src = folded.source[column][picks]
        return pc.take(table[column], pa.array(np.where(src < 0, folded.row[picks], src)))

    out: list[pa.Table] = []
    slots: list[np.ndarray] = []  # as in merge_slice_counted
    met_count = deleted = kept = 0
    n_base = base.num_rows if base is not None else 0
    if base is not None and base.num_rows:
        base = expand_dictionaries(base, table.schema)
        met, version = _met(base[key_field], folded.keys)
        base_keep = np.ones(base.num_rows, dtype=bool)
        base_keep[met] = False
        met_data = is_data[version]
        met_count, deleted = len(met), int((~met_data).sum())
        rows, picks = met[met_data], version[met_data]
        base_wins = np.zeros(len(rows), dtype=bool)
        if ordering_field is not None and len(rows):
            ords = pc.take(versions["ord"], pa.array(folded.version[picks]))
            base_wins = np.asarray(pc.fill_null(pc.greater(pc.cast(pc.take(base[ordering_field], pa.array(rows)),
                                                                   ord_type), ords), False), dtype=bool)
        kept = int(base_wins.sum())
        met_base = base.take(pa.array(rows))
        use_log = {name: np.where(base_wins, ~partial.gives(met_base, name, None) & folded.gives[name][picks],
                                  folded.gives[name][picks]) for name in table.column_names}
        # a base row that outranks the log version but takes cells from it changed in the log's commit
        filled = np.zeros(len(rows), dtype=bool)
        for name in use_log.keys() - set(META_COLUMNS):
            filled |= use_log[name]
        columns = [pc.if_else(pa.array(~base_wins | filled if name in META_COLUMNS else use_log[name]),
                              log_cells(name, picks), met_base[name].combine_chunks())
                   for name in table.column_names]
        out.append(base.filter(pa.array(base_keep)))
        out.append(pa.Table.from_arrays(columns, schema=table.schema))
        slots += [np.flatnonzero(base_keep), rows]
        log_rows[version] = False
    if not base_keys_only:
        picks = np.flatnonzero(log_rows)
        out.append(pa.Table.from_arrays([log_cells(c, picks) for c in table.column_names], schema=table.schema))
        slots.append(n_base + np.arange(len(picks), dtype=np.int64))
    counts = MergeCounts(met_count, deleted, len(folded.keys), kept)
    out = [t for t in out if t.num_rows]
    if not out:
        return table.schema.empty_table(), counts
    merged = pa.concat_tables(out) if len(out) > 1 else out[0]
    return (_in_slot_order(merged, slots) if in_place else merged), counts
