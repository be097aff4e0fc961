"""How the metadata table's record index differs from the data it indexes: each key of the table's latest
committed slices must map to the file group holding it, and no key the table no longer holds may remain
(what `hudi-py validate` checks)."""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config.table_config import TableConfig
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.record_index import located
from hudi_ds.metadata.record_index_sync import table_locations
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline

SHOWN = 5  # keys named per kind of difference


@dataclass
class IndexDifferences:
    """Keys the index lacks, keys it holds that the table does not, keys it places in another file group
    (key, where the index says, where the key is), with the count of each kind."""

    keys: int = 0
    missing: list[str] = field(default_factory=list)
    missing_count: int = 0
    stale: list[str] = field(default_factory=list)
    stale_count: int = 0
    misplaced: list[tuple[str, str, str]] = field(default_factory=list)
    misplaced_count: int = 0

    def problems(self) -> list[str]:
        """One sentence per kind of difference found."""
        out = []
        if self.missing_count:
            out.append(f"the record index lacks {self.missing_count} key(s) the table holds, e.g. "
                       f"{', '.join(map(repr, self.missing))}")
        if self.stale_count:
            out.append(f"the record index holds {self.stale_count} key(s) the table no longer holds, e.g. "
                       f"{', '.join(map(repr, self.stale))}")
        if self.misplaced_count:
            out.append(f"the record index places {self.misplaced_count} key(s) in another file group than the one "
                       "holding them, e.g. " + ", ".join(f"{k!r} in {said} (held in {held})"
                                                          for k, said, held in self.misplaced))
        return out


def _where(partitions: pa.ChunkedArray, file_ids: pa.ChunkedArray) -> pa.ChunkedArray:
    return pc.binary_join_element_wise(pc.fill_null(partitions, ""), file_ids, "/")


def index_differences(storage: Storage, config: TableConfig, timeline: Timeline) -> IndexDifferences:
    """The record index (read through `timeline`'s completed instants) against the table's latest committed
    slices."""
    held = table_locations(storage, config, timeline)
    table = pa.table({"k": pa.array(list(held), pa.string()),
                      "held": pa.array([f"{p}/{f}" for p, f, _ in held.values()], pa.string())})
    found = located(MetadataTable.open(storage), timeline)
    places = found.places.locations
    index = pa.table({"k": found.keys, "said": _where(
        pa.chunked_array([pa.array([p.partition for p in places], pa.string()).take(found.codes)]),
        pa.chunked_array([pa.array([p.file_id for p in places], pa.string()).take(found.codes)]))})
    both = table.join(index, "k", join_type="full outer").sort_by("k")
    missing = both.filter(pc.is_null(both["said"]))
    stale = both.filter(pc.is_null(both["held"]))
    misplaced = both.filter(pc.and_(pc.and_(pc.is_valid(both["said"]), pc.is_valid(both["held"])),
                                    pc.not_equal(both["said"], both["held"])))
    return IndexDifferences(
        len(held), missing["k"].slice(0, SHOWN).to_pylist(), missing.num_rows,
        stale["k"].slice(0, SHOWN).to_pylist(), stale.num_rows,
        [(r["k"], r["said"], r["held"]) for r in misplaced.slice(0, SHOWN).to_pylist()], misplaced.num_rows)
