"""The merge rule, vectorised with pyarrow.compute.

Per record key, the version with the highest ordering value wins; ties go to the later commit,
then to the later position (block, row). Without an ordering field the later commit wins. A delete
is a version like any other; a *natural* delete (ordering value null or integer 0, Hudi's "no event
time" marker) removes every version written before it. Base-file rows are older than every log
block of their slice, so a base row survives only when its ordering value is strictly greater.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEY = "_hoodie_record_key"


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


def natural_deletes(ordering: pa.Array) -> np.ndarray:
    """Hudi's "no event time" delete marker: a null, or an integer 0, ordering value."""
    natural = pc.is_null(ordering)
    if pa.types.is_integer(ordering.type):
        natural = pc.or_(natural, pc.fill_null(pc.equal(ordering, 0), False))
    return np.asarray(natural.to_numpy(zero_copy_only=False), dtype=bool)


def _versions_table(
    data: LogVersions | None, deletes: LogDeletes | None, ordering_field: str | None, ord_type: pa.DataType
) -> pa.Table:
    """One small table of every log version: key, ord, natural, is_delete, rank, pos, row."""
    parts = []
    if data is not None and data.table.num_rows:
        n = data.table.num_rows
        ordv = data.table[ordering_field] if ordering_field else pa.nulls(n, ord_type)
        parts.append(
            pa.table(
                {
                    "key": data.table[KEY],
                    "ord": pc.cast(ordv, ord_type) if ordering_field else ordv,
                    "natural": pa.array(np.zeros(n, dtype=bool)),
                    "is_delete": pa.array(np.zeros(n, dtype=bool)),
                    "rank": pa.array(data.rank.astype(np.int64)),
                    "pos": pa.array(data.position.astype(np.int64)),
                    "row": pa.array(np.arange(n, dtype=np.int64)),
                }
            )
        )
    if deletes is not None and len(deletes.keys):
        n = len(deletes.keys)
        parts.append(
            pa.table(
                {
                    "key": pc.cast(deletes.keys, pa.string()),
                    "ord": pc.cast(deletes.ordering, ord_type),
                    "natural": pa.array(deletes.natural.astype(bool)),
                    "is_delete": pa.array(np.ones(n, dtype=bool)),
                    "rank": pa.array(deletes.rank.astype(np.int64)),
                    "pos": pa.array(deletes.position.astype(np.int64)),
                    "row": pa.array(np.full(n, -1, dtype=np.int64)),
                }
            )
        )
    return pa.concat_tables(parts) if len(parts) > 1 else parts[0]


def _last_per_key(t: pa.Table, sort_keys: list[str]) -> pa.Table:
    """Rows that are the maximum per key under sort_keys (nulls sort lowest)."""
    order = pc.sort_indices(t, sort_keys=[("key", "ascending", "at_start")]
                            + [(k, "ascending", "at_start") for k in sort_keys])
    t = t.take(order)
    keys = t["key"]
    if t.num_rows <= 1:
        return t
    nxt = keys.slice(1)
    cur = keys.slice(0, t.num_rows - 1)
    is_last = pc.not_equal(pc.cast(cur, pa.string()), pc.cast(nxt, pa.string()))
    mask = pa.concat_arrays([is_last.combine_chunks() if isinstance(is_last, pa.ChunkedArray) else is_last,
                             pa.array([True])])
    return t.filter(mask)


def _log_winners(versions: pa.Table, ordered: bool) -> tuple[pa.Table, pa.Table]:
    """(winners per key, natural-delete points per key)."""
    natural = versions.filter(pc.and_(versions["is_delete"], versions["natural"]))
    points = _last_per_key(natural.select(["key", "rank", "pos"]), ["rank", "pos"]) if natural.num_rows else None
    rest = versions.filter(pc.invert(pc.and_(versions["is_delete"], versions["natural"])))
    if points is not None and rest.num_rows:
        idx = pc.index_in(rest["key"], value_set=points["key"])
        prank = pc.take(points["rank"], idx)
        ppos = pc.take(points["pos"], idx)
        after = pc.or_(
            pc.greater(rest["rank"], prank),
            pc.and_(pc.equal(rest["rank"], prank), pc.greater(rest["pos"], ppos)),
        )
        rest = rest.filter(pc.fill_null(after, True))
    sort_keys = (["ord"] if ordered else []) + ["rank", "pos"]
    winners = _last_per_key(rest, sort_keys) if rest.num_rows else rest
    return winners, (points if points is not None else versions.schema.empty_table().select(["key", "rank", "pos"]))


def merge_slice(
    base: pa.Table | None,
    data: LogVersions | None,
    deletes: LogDeletes | None,
    ordering_field: str | None,
    schema: pa.Schema,
) -> pa.Table:
    """The latest image of every live record of one file slice, as a table of `schema`."""
    no_log = (data is None or data.table.num_rows == 0) and (deletes is None or len(deletes.keys) == 0)
    if no_log:
        return base if base is not None else schema.empty_table()
    ord_type = schema.field(ordering_field).type if ordering_field else pa.int64()
    versions = _versions_table(data, deletes, ordering_field, ord_type)
    winners, points = _log_winners(versions, ordering_field is not None)
    out: list[pa.Table] = []
    keep_log = pc.invert(winners["is_delete"])
    if base is not None and base.num_rows:
        keys = base[KEY]
        alive = pc.invert(pc.is_in(keys, value_set=points["key"])) if points.num_rows else None
        idx = pc.index_in(keys, value_set=winners["key"])
        in_winners = pc.is_valid(idx)
        base_keep = pc.invert(in_winners)
        if ordering_field is not None:
            w_ord = pc.take(winners["ord"], idx)
            base_wins = pc.fill_null(pc.greater(pc.cast(base[ordering_field], ord_type), w_ord), False)
            if alive is not None:
                base_wins = pc.and_(base_wins, alive)
            base_keep = pc.or_(base_keep, base_wins)
            keep_log = pc.and_(keep_log, pc.invert(pc.is_in(winners["key"], value_set=pc.filter(keys, base_wins))))
        if alive is not None:
            base_keep = pc.and_(base_keep, alive)
        out.append(base.filter(base_keep))
    if data is not None:
        rows = pc.filter(winners["row"], keep_log)
        if len(rows):
            out.append(data.table.take(rows))
    if not out:
        return schema.empty_table()
    return pa.concat_tables(out) if len(out) > 1 else out[0]
