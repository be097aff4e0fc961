"""A plain dict model of a Hudi table under hudi_ds's merge rule, to check reads against.

Records are identified by (partition value, record key): the bucket index is not global, so the
same key in two partitions is two records, as in Apache Hudi.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class DictModel:
    """Highest ordering value wins, ties to the later write; a delete whose ordering value is 0
    (Hudi's "no event time" marker) always deletes.

    With `tombstones` (MERGE_ON_READ before compaction) a delete is itself a version: a later write
    with a lower ordering value loses to it, as in Hudi's event-time merge of log records. A
    copy-on-write table keeps no trace of a deleted key."""

    def __init__(self, key: str | list[str], ordering: str | None, partition: str | None = None,
                 tombstones: bool = False, bucket_of: Any = None) -> None:
        self.keys = [key] if isinstance(key, str) else list(key)
        self.ordering, self.partition = ordering, partition
        self.tombstones = tombstones
        self.rows: dict[Any, dict[str, Any]] = {}
        self.dead: dict[Any, Any] = {}  # identity -> ordering value of the delete
        # A delete for a bucket that holds no file group yet writes nothing, so it leaves no tombstone.
        self.bucket_of = bucket_of
        self.groups: set[Any] = set()

    def _group(self, k: tuple[Any, ...]) -> Any:
        return (k[0], self.bucket_of(k[1:]) if self.bucket_of else 0)

    def ident(self, r: dict[str, Any]) -> tuple[Any, ...]:
        return (r[self.partition] if self.partition else None, *(r[k] for k in self.keys))

    def _precombine(self, rows: Iterable[dict[str, Any]]) -> dict[Any, dict[str, Any]]:
        out: dict[Any, dict[str, Any]] = {}
        for r in rows:
            old = out.get(self.ident(r))
            if old is None or self.ordering is None or r[self.ordering] >= old[self.ordering]:
                out[self.ident(r)] = r
        return out

    def upsert(self, rows: Iterable[dict[str, Any]]) -> None:
        for k, r in self._precombine(rows).items():
            old = self.rows.get(k)
            if self.ordering is not None and k in self.dead and r[self.ordering] < self.dead[k]:
                continue
            if old is None or self.ordering is None or r[self.ordering] >= old[self.ordering]:
                self.rows[k] = dict(r)
                self.dead.pop(k, None)
                self.groups.add(self._group(k))

    def delete(self, rows: Iterable[dict[str, Any]]) -> None:
        for k, r in self._precombine(rows).items():
            old = self.rows.get(k)
            natural = self.ordering is None or r[self.ordering] == 0
            if old is not None and not natural and r[self.ordering] < old[self.ordering]:
                continue
            self.rows.pop(k, None)
            if (self.tombstones and not natural and self._group(k) in self.groups
                    and (k not in self.dead or r[self.ordering] >= self.dead[k])):
                self.dead[k] = r[self.ordering]

    def overwrite(self, rows: Iterable[dict[str, Any]], whole_table: bool) -> None:
        new = self._precombine(rows)
        if whole_table:
            self.rows, self.dead, self.groups = {}, {}, set()
        else:
            parts = {k[0] for k in new}
            self.rows = {k: v for k, v in self.rows.items() if k[0] not in parts}
            self.dead = {k: v for k, v in self.dead.items() if k[0] not in parts}
            self.groups = {g for g in self.groups if g[0] not in parts}
        self.rows.update({k: dict(v) for k, v in new.items()})
        self.groups.update(self._group(k) for k in new)

    def sorted_rows(self, columns: list[str]) -> list[tuple[Any, ...]]:
        return sorted((tuple(r[c] for c in columns) for r in self.rows.values()), key=repr)
