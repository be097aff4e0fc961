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
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.schema.strings import encode_dictionaries, expand_dictionaries


@dataclass(frozen=True)
class LogVersions:
    """Data rows from one or more log blocks, in log order, with their commit rank."""

    table: pa.Table
    rank: np.ndarray  # commit order of each row's block (higher = later)
    position: np.ndarray  # global position among log rows (block order, then row)


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


_FOLD_COLUMNS = ["key", "ord", "natural", "rank", "pos"]  # what a fold looks at


def _log_winners(versions: pa.Table, ordered: bool) -> pa.Table:
    """The folded log version of every key: only keys with several versions are folded, the others (most of
    them, even when a delete meets an upsert) pass as they are."""
    repeated_keys = _repeated(versions["key"])
    if len(repeated_keys) == 0:
        return versions  # one version per key (the common case): nothing to fold
    candidates = np.flatnonzero(np.asarray(pc.is_in(versions["key"], value_set=repeated_keys), dtype=bool))
    keep = np.ones(versions.num_rows, dtype=bool)
    keep[candidates] = False
    keep[candidates[_fold(versions.select(_FOLD_COLUMNS).take(candidates), ordered)]] = True
    return versions.filter(pa.array(keep))


def _repeated(keys: pa.ChunkedArray) -> pa.Array:
    """The keys that occur more than once (integer keys sorted by NumPy, ten times faster than Arrow's hash
    kernels on a slice's few thousand log versions)."""
    if pa.types.is_integer(keys.type):
        ordered = np.sort(keys.to_numpy())
        return pa.array(np.unique(ordered[1:][ordered[1:] == ordered[:-1]]), keys.type)
    counts = pc.value_counts(keys)
    return pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))


def _fold(versions: pa.Table, ordered: bool) -> np.ndarray:
    """The rows of `versions` that win their key's fold (see the module docstring), by NumPy sorts of small
    integer codes: the key's group, the version's place in log order, the rank of its ordering value."""
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
) -> tuple[pa.Table, MergeCounts]:
    """The latest image of every live record of one file slice, as a table of `schema`, and what the merge
    did to the base rows.

    `base_keys_only`: `base` is one part of the slice's base file; emit log records only for its keys.
    `key_field`: the column records are matched by, the record key or a column equal to it (delete keys typed
    like it). `keep_dictionaries`: the base columns read as dictionaries stay so, and the log rows joining them
    are encoded alike (else they are expanded)."""
    no_log = (data is None or data.table.num_rows == 0) and (deletes is None or len(deletes.keys) == 0)
    if no_log:
        return (base if base is not None else schema.empty_table()), MergeCounts(0, 0, 0)
    ord_type = schema.field(ordering_field).type if ordering_field else pa.int64()
    typed = data.table if data is not None else base
    key_type = typed.schema.field(key_field).type if typed is not None else pa.string()
    winners = _log_winners(_versions_table(data, deletes, ordering_field, ord_type, key_field, key_type),
                           ordering_field is not None)
    out: list[pa.Table] = []
    keep_log = pc.invert(winners["is_delete"])
    if base_keys_only:
        own = base[key_field].combine_chunks() if base is not None else pa.array([], key_type)
        keep_log = pc.and_(keep_log, pc.is_in(winners["key"], value_set=own))
    met_count = deleted = 0
    if base is not None and base.num_rows:
        met, version = _met(base[key_field], winners["key"])
        base_keep = np.ones(base.num_rows, dtype=bool)
        base_keep[met] = False
        met_is_delete = pc.take(winners["is_delete"], version)
        if ordering_field is not None and len(met):
            # only base rows a log version meets are compared (a tenth of the rows in a typical upsert)
            base_wins = pc.and_(
                pc.invert(met_is_delete),
                pc.fill_null(pc.greater(pc.cast(pc.take(base[ordering_field], met), ord_type),
                                        pc.take(winners["ord"], version)), False),
            )
            if pc.any(base_wins).as_py():
                winning = met[np.asarray(base_wins.to_numpy(zero_copy_only=False), dtype=bool)]
                base_keep[winning] = True
                beaten = pc.is_in(winners["key"], value_set=pc.take(base[key_field], winning))
                keep_log = pc.and_(keep_log, pc.invert(beaten))
        met_count, deleted = len(met), int(pc.sum(met_is_delete).as_py() or 0)  # a delete beats any base row
        out.append(base.filter(pa.array(base_keep)))
    if data is not None:
        rows = pc.filter(winners["row"], keep_log)
        if len(rows):
            out.append(data.table.take(rows))
    counts = MergeCounts(met_count, deleted, winners.num_rows)
    if len(out) > 1 and keep_dictionaries:
        out[1] = encode_dictionaries(out[1], out[0].schema)
    elif len(out) > 1:
        out[0] = expand_dictionaries(out[0], out[1].schema)  # base columns read as dictionaries
    if not out:
        return schema.empty_table(), counts
    return (pa.concat_tables(out) if len(out) > 1 else out[0]), counts
