"""A plain dict model of a Hudi table under hudi_ds's merge rule, to check reads against.

Records are identified by (partition value, record key): the bucket index is not global, so the
same key in two partitions is two records, as in Apache Hudi.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any


class DictModel:
    """Highest ordering value wins, ties to the later write; a delete whose ordering value is 0
    (Hudi's "no event time" marker) always deletes."""

    def __init__(self, key: str | list[str], ordering: str | None, partition: str | None = None) -> None:
        self.keys = [key] if isinstance(key, str) else list(key)
        self.ordering, self.partition = ordering, partition
        self.rows: dict[Any, dict[str, Any]] = {}

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
            if old is None or self.ordering is None or r[self.ordering] >= old[self.ordering]:
                self.rows[k] = dict(r)

    def delete(self, rows: Iterable[dict[str, Any]]) -> None:
        for k, r in self._precombine(rows).items():
            old = self.rows.get(k)
            if old is None:
                continue
            if self.ordering is None or r[self.ordering] == 0 or r[self.ordering] >= old[self.ordering]:
                del self.rows[k]

    def overwrite(self, rows: Iterable[dict[str, Any]], whole_table: bool) -> None:
        new = self._precombine(rows)
        if whole_table:
            self.rows = {}
        else:
            parts = {k[0] for k in new}
            self.rows = {k: v for k, v in self.rows.items() if k[0] not in parts}
        self.rows.update({k: dict(v) for k, v in new.items()})

    def sorted_rows(self, columns: list[str]) -> list[tuple[Any, ...]]:
        return sorted((tuple(r[c] for c in columns) for r in self.rows.values()), key=repr)
