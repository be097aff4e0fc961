"""Merging partial versions of records: Apache Hudi's partial update modes (hoodie.table.partial.update.mode on
version 9; PartialUpdateAvroPayload / OverwriteNonDefaultsWithLatestAvroPayload on version 6).

A version *gives* some cells and leaves the others to earlier versions: KEEP_VALUES leaves the columns its log
block does not carry (Hudi's IS_PARTIAL blocks), IGNORE_DEFAULTS the null cells (null is the default of every
column Hudi writes), IGNORE_MARKERS the cells equal to the marker string (hoodie.write.partial.update.custom.marker).
The versions of a key fold in log order under the merge mode's rule for which version wins (slice_merge); the
winner's cells it does not give are taken from the loser, so a cell ends as the value of the highest-ranked version
that gives it. A delete that wins ends the record: versions after it fill nothing from before it (the cells they
leave are null). The folded version meets the base row the same way. The fold runs in rounds, one per version of
the most-updated key, each vectorised over the keys (a slice holds few versions per key between compactions).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

KEEP_VALUES = "KEEP_VALUES"
FILL_DEFAULTS = "FILL_DEFAULTS"
IGNORE_DEFAULTS = "IGNORE_DEFAULTS"
IGNORE_MARKERS = "IGNORE_MARKERS"
PARTIAL_UPDATE_MODES = ("NONE", KEEP_VALUES, FILL_DEFAULTS, IGNORE_DEFAULTS, IGNORE_MARKERS)


@dataclass(frozen=True)
class PartialUpdate:
    """How a table's versions give cells (FILL_DEFAULTS and NONE give every cell: no PartialUpdate)."""

    mode: str
    marker: str | None = None
    fixed: frozenset[str] = field(default_factory=frozenset)  # columns every version gives (meta, key, ordering)

    def gives(self, table: pa.Table, column: str, absent: np.ndarray | None) -> np.ndarray:
        """The rows of `table` (versions) that give a value for `column`; `absent` marks the rows whose log block
        did not carry the column."""
        n = table.num_rows
        given = np.ones(n, dtype=bool) if absent is None else ~absent
        if column in self.fixed:
            return np.ones(n, dtype=bool)
        values = table[column]
        if self.mode == IGNORE_DEFAULTS:
            given &= np.asarray(pc.is_valid(values), dtype=bool)
        elif self.mode == IGNORE_MARKERS and self.marker is not None and pa.types.is_string(values.type):
            given &= ~np.asarray(pc.fill_null(pc.equal(values, self.marker), False), dtype=bool)
        return given


@dataclass
class FoldedVersions:
    """Each key's folded log version: `row[g]` the data row of the version that won (-1: a delete won), `source[c]`
    the data row each cell comes from (-1: null), `gives[c]` whether the folded version gives the cell, `version[g]`
    the version (row of the versions table) whose ordering value the folded version carries."""

    keys: pa.Array
    row: np.ndarray
    version: np.ndarray
    source: dict[str, np.ndarray]
    gives: dict[str, np.ndarray]


def fold_partial(versions: pa.Table, data_gives: dict[str, np.ndarray], ordered: bool,
                 latest: frozenset[str] = frozenset()) -> FoldedVersions:
    """The folded version of every key of `versions` (slice_merge's table of log versions: key, ord, natural,
    is_delete, rank, pos, row), `data_gives[c]` telling which data rows give column c. The `latest` columns (the
    meta columns: the commit that wrote the record) come from the last version that gave the folded version a
    cell, so that a version that changed a record shows as its writer even where an earlier one won."""
    n = versions.num_rows
    encoded = pc.dictionary_encode(versions["key"].combine_chunks(), null_encoding="encode")
    group = np.asarray(encoded.indices, dtype=np.int64)
    n_groups = len(encoded.dictionary)
    order = np.lexsort((np.asarray(versions["pos"]), np.asarray(versions["rank"]), group))
    first = np.searchsorted(group[order], np.arange(n_groups))
    step = np.arange(n) - first[group[order]]  # the place of each version (in log order) among its key's
    ord_rank = (np.asarray(pc.rank(versions["ord"], sort_keys=[("", "ascending", "at_start")], tiebreaker="dense"),
                           dtype=np.int64) if ordered else np.zeros(n, dtype=np.int64))
    natural = np.asarray(versions["natural"], dtype=bool)
    is_delete = np.asarray(versions["is_delete"], dtype=bool)
    data_row = np.asarray(versions["row"], dtype=np.int64)

    exists = np.zeros(n_groups, dtype=bool)
    deleted = np.zeros(n_groups, dtype=bool)
    state_rank = np.zeros(n_groups, dtype=np.int64)
    state_version = np.full(n_groups, -1, dtype=np.int64)
    state_row = np.full(n_groups, -1, dtype=np.int64)
    source = {c: np.full(n_groups, -1, dtype=np.int64) for c in data_gives}
    gives = {c: np.zeros(n_groups, dtype=bool) for c in data_gives}
    for r in range(int(step.max()) + 1 if n else 0):
        at = order[step == r]
        g = group[at]
        new_row = data_row[at]
        is_data = ~is_delete[at]
        wins = ~exists[g] | natural[at] | ~(state_rank[g] > ord_rank[at])
        current_data = exists[g] & ~deleted[g]
        after_delete = exists[g] & deleted[g]
        contributed = np.zeros(len(at), dtype=bool)
        for c, column_gives in data_gives.items():
            if c in latest:
                continue
            new_gives = np.zeros(len(at), dtype=bool)
            new_gives[is_data] = column_gives[new_row[is_data]]
            cur_gives = gives[c][g] & current_data
            # the winner's cell where it gives one, else the loser's; a winning delete keeps nothing
            take_new = is_data & new_gives & (wins | (current_data & ~cur_gives))
            keep_current = ~take_new & cur_gives & ~(wins & ~is_data)
            source[c][g] = np.where(take_new, new_row, np.where(keep_current, source[c][g], -1))
            gives[c][g] = np.where(wins, is_data & (new_gives | cur_gives | after_delete),
                                   cur_gives | (current_data & new_gives))
            contributed |= take_new
        for c in latest & data_gives.keys():
            by_new = is_data & (wins | contributed)
            source[c][g] = np.where(by_new, new_row, np.where(wins, -1, source[c][g]))
            gives[c][g] = np.where(by_new, True, gives[c][g] & ~wins)
        winners = at[wins]
        gw = g[wins]
        exists[gw] = True
        deleted[gw] = is_delete[winners]
        state_rank[gw] = np.where(natural[winners], -1, ord_rank[winners])
        state_version[gw] = winners
        state_row[gw] = np.where(is_delete[winners], -1, data_row[winners])
    return FoldedVersions(encoded.dictionary, state_row, state_version, source, gives)
