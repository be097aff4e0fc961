"""How a secondary index differs from the rows it indexes: it must hold the key of each row of the table's snapshot
(its indexed value and record key), in the file group that key hashes to, and no other key (what
`hudi-py validate` checks)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.secondary_index import SecondaryIndex, expected_keys, read_index, value_texts
from hudi_ds.timeline import Timeline

SHOWN = 5  # keys named per kind of difference


@dataclass
class SecondaryIndexDifferences:
    """Keys of rows the index lacks, keys it holds that no row has, keys in another file group than their hash
    names, with the count of each kind."""

    index: SecondaryIndex
    keys: int = 0
    missing: list[str] = field(default_factory=list)
    missing_count: int = 0
    stale: list[str] = field(default_factory=list)
    stale_count: int = 0
    misplaced: list[tuple[str, int, int]] = field(default_factory=list)
    misplaced_count: int = 0

    def problems(self) -> list[str]:
        """One sentence per kind of difference found."""
        name, out = self.index.partition, []
        if self.missing_count:
            out.append(f"{name} lacks {self.missing_count} key(s) of the table's rows, e.g. "
                       f"{', '.join(map(repr, self.missing))}")
        if self.stale_count:
            out.append(f"{name} holds {self.stale_count} key(s) no row of the table has, e.g. "
                       f"{', '.join(map(repr, self.stale))}")
        if self.misplaced_count:
            out.append(f"{name} holds {self.misplaced_count} key(s) in another file group than their hash names, "
                       "e.g. " + ", ".join(f"{k!r} in {held} (hashes to {hashed})"
                                           for k, held, hashed in self.misplaced))
        return out


def index_differences(mdt: MetadataTable, data_timeline: Timeline, index: SecondaryIndex,
                      rows: pa.Table, record_key: str) -> SecondaryIndexDifferences:
    """The index (read through `data_timeline`'s completed instants) against `rows`, the snapshot's record keys
    (column `record_key`) and indexed column."""
    expected = expected_keys(rows[record_key], value_texts(rows[index.column], index.column))
    found = read_index(mdt, data_timeline, index)
    held = pa.array(found.keys, pa.string())
    missing_keys = expected.filter(pc.invert(pc.is_in(expected, held)))
    missing_keys = missing_keys.take(pc.sort_indices(missing_keys))
    stale_keys = held.filter(pc.invert(pc.is_in(held, expected)))
    return SecondaryIndexDifferences(
        index, len(held), missing_keys.slice(0, SHOWN).to_pylist(), len(missing_keys),
        stale_keys.slice(0, SHOWN).to_pylist(), len(stale_keys), found.misplaced[:SHOWN], len(found.misplaced))
