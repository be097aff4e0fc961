"""A model of a Hudi table under Apache Hudi's merge rule, in plain dicts, to check reads against.

Records are identified by (partition value, record key): the bucket index is not global, so the
same key in two partitions is two records, as in Apache Hudi. The model mirrors Hudi's file layout
just enough to give Hudi's answers: the first write to a (partition, bucket) creates its base file;
later writes to a MERGE_ON_READ table append log versions, which fold in order (a data version
replaces the current one unless that has a higher ordering value; a delete always replaces it) and
then meet the base row (a folded delete removes it; a folded data version replaces it unless the base
row has a strictly higher ordering value). A COPY_ON_WRITE write merges straight into the base. A
compaction folds the logs into the base rows, so the answers of a MERGE_ON_READ table depend on when it ran.

Under commit-time ordering (no ordering field) the later version always wins. Under FirstValueAvroPayload
(`first_value`) a data version does not replace one with an equal ordering value: the earlier row of a write, the
earlier log version, the base row stay (a delete still replaces it). With a partial update mode a
version gives some cells only (GIVEN): KEEP_VALUES the columns its write carried, IGNORE_DEFAULTS the non-null
ones, IGNORE_MARKERS those not equal to the marker; whenever two versions meet, the winner's cells it does not give
come from the loser; a version that follows a delete takes nothing from before it; a cell no version gives keeps
the winner's own value.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

DELETED = object()
GIVEN = "__given"  # a version's given columns, under a partial update mode


class DictModel:
    def __init__(self, key: str | list[str], ordering: str | None, partition: str | list[str] | None = None,
                 merge_on_read: bool = False, bucket_of: Callable[[tuple[Any, ...]], Any] | None = None,
                 partial: str | None = None, marker: str | None = None, first_value: bool = False) -> None:
        self.first_value = first_value
        self.partial = partial
        self.marker = marker
        self.columns: set[str] = set()  # every column written so far (a base file row holds them all)
        self.keys = [key] if isinstance(key, str) else list(key)
        self.ordering = ordering
        self.partition = [partition] if isinstance(partition, str) else list(partition or [])
        self.mor = merge_on_read
        self.bucket_of = bucket_of
        self.base: dict[Any, dict[str, Any]] = {}
        self.log: dict[Any, Any] = {}  # identity -> folded log version (row or DELETED)
        self.groups: set[Any] = set()

    def ident(self, r: dict[str, Any]) -> tuple[Any, ...]:
        return (tuple(r[p] for p in self.partition) or None, *(r[k] for k in self.keys))

    def _group(self, k: tuple[Any, ...]) -> Any:
        return (k[0], self.bucket_of(k[1:]) if self.bucket_of else 0)

    def _ord(self, r: dict[str, Any]) -> Any:
        return r[self.ordering] if self.ordering else 0

    def _given(self, r: dict[str, Any], columns: Iterable[str] | None = None) -> dict[str, Any]:
        """`r` with the cells it gives (None for a full version), missing columns as null."""
        if self.partial is None:
            return r
        out = dict(r)
        names = set(out) if columns is None else set(columns)
        fixed = {*self.keys, *self.partition, *([self.ordering] if self.ordering else [])}
        if self.partial == "IGNORE_DEFAULTS":
            names = {c for c in names if out.get(c) is not None}
        elif self.partial == "IGNORE_MARKERS":
            names = {c for c in names if out.get(c) != self.marker}
        out[GIVEN] = frozenset((names | fixed) - {GIVEN})
        return out

    def _combine(self, winner: dict[str, Any], loser: Any) -> dict[str, Any]:
        """The winner, its cells it does not give taken from the loser (a partial update mode)."""
        if self.partial is None or loser is None or loser is DELETED:
            return winner
        out = dict(winner)
        for c in loser[GIVEN] - winner[GIVEN]:
            out[c] = loser.get(c)
        out[GIVEN] = winner[GIVEN] | loser[GIVEN]
        return out

    def _after_delete(self, row: dict[str, Any]) -> dict[str, Any]:
        """A version following a delete: every cell is its own, nothing comes from before the delete."""
        return row if self.partial is None else {**row, GIVEN: frozenset(self.columns | set(row)) - {GIVEN}}

    def _as_base(self, row: dict[str, Any]) -> dict[str, Any]:
        """A row written to a base file: whole (the columns it lacked null), giving the cells its values give."""
        row = {**dict.fromkeys(self.columns), **{k: v for k, v in row.items() if k != GIVEN}}
        return self._given(row) if self.partial else row

    def _replaces(self, new: Any, current: Any) -> bool:
        """Whether a data version `new` replaces `current` by their ordering values."""
        if self.ordering is None:
            return True
        return self._ord(new) > self._ord(current) if self.first_value else self._ord(new) >= self._ord(current)

    def _precombine(self, rows: Iterable[dict[str, Any]],
                    columns: Iterable[str] | None = None) -> dict[Any, dict[str, Any]]:
        """One version per record of rows written together; they fold in ordering-value order (ties in arrival
        order), so a partial update's cells come from the highest-ranked rows that give them."""
        out: dict[Any, dict[str, Any]] = {}
        if self.ordering is not None:
            rows = sorted(rows, key=self._ord)
        for r in rows:
            r = self._given(r, columns)
            old = out.get(self.ident(r))
            if old is None or self._replaces(r, old):
                out[self.ident(r)] = self._combine(r, old)
            else:
                out[self.ident(r)] = self._combine(old, r)
        return out

    def _fold(self, current: Any, new: Any) -> Any:
        if new is DELETED or current is None:
            return new
        if current is DELETED:
            return self._after_delete(new)
        if self._replaces(new, current):
            return self._combine(new, current)
        return self._combine(current, new)

    def _meet(self, base: dict[str, Any] | None, log: Any) -> dict[str, Any] | None:
        if log is None:
            return base
        if log is DELETED:
            return None
        if base is not None and not self._replaces(log, base):
            return self._combine(base, log)
        return self._combine(log, base)

    def _write(self, versions: dict[Any, Any]) -> None:
        existing = set(self.groups)  # a write's rows for a new bucket all land in its new base file
        for k, v in versions.items():
            group = self._group(k)
            if group not in existing:
                if v is DELETED:
                    continue  # nothing to delete in a bucket that does not exist yet
                self.groups.add(group)
                self.base[k] = self._as_base(v)
            elif self.mor:
                self.log[k] = self._fold(self.log.get(k), v)
            else:
                merged = self._meet(self.base.get(k), v)
                if merged is None:
                    self.base.pop(k, None)
                else:
                    self.base[k] = self._as_base(merged)

    def upsert(self, rows: Iterable[dict[str, Any]], columns: Iterable[str] | None = None) -> None:
        """Rows written together; `columns`: the columns the write carried (a KEEP_VALUES partial update)."""
        rows = list(rows)
        self.columns |= set(columns) if columns is not None else {c for r in rows for c in r}
        self._write(self._precombine(rows, columns))

    def compact(self) -> None:
        """A compaction: every log folds into its base row (a MERGE_ON_READ table's answers change with it)."""
        self.base = {k: self._as_base(v) for k, v in self.rows.items()}
        self.log = {}

    def changes(self, rows: Iterable[dict[str, Any]], is_delete: Callable[[dict[str, Any]], bool]) -> None:
        """Rows written together, some of them deletes (delete markers, a changelog): per record the winner by the
        merge rule, which deletes the record when it is a delete."""
        rows = list(rows)
        self.columns |= {c for r in rows for c in r}
        self._write({k: DELETED if is_delete(v) else v for k, v in self._precombine(rows).items()})

    def delete(self, rows: Iterable[dict[str, Any]]) -> None:
        self._write({k: DELETED for k in self._precombine(rows)})

    def overwrite(self, rows: Iterable[dict[str, Any]], whole_table: bool) -> None:
        new = self._precombine(rows)
        parts = {k[0] for k in new}
        keep = (lambda k: False) if whole_table else (lambda k: k[0] not in parts)
        self.base = {k: v for k, v in self.base.items() if keep(k)}
        self.log = {k: v for k, v in self.log.items() if keep(k)}
        self.groups = {g for g in self.groups if keep(g)}
        self._write(new)

    @property
    def rows(self) -> dict[Any, dict[str, Any]]:
        out = {}
        for k in set(self.base) | set(self.log):
            merged = self._meet(self.base.get(k), self.log.get(k))
            if merged is not None:
                out[k] = merged
        return out

    def sorted_rows(self, columns: list[str]) -> list[tuple[Any, ...]]:
        return sorted((tuple(r.get(c) for c in columns) for r in self.rows.values()), key=repr)
