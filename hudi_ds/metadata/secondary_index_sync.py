"""Keeping Apache Hudi 1.x's secondary indexes in step with the data table, as its metadata writer does
(SecondaryIndexRecordGenerationUtils.convertWriteStatsToSecondaryIndexRecords): a data instant's deltacommit
carries, per index file group it changes, a log file with the keys of the rows it gave a new value (an HFile data
block) and the keys of the rows it removed or changed (a DELETE block, as Hudi's own logs hold them); the metadata
table's compaction folds them into HFile base files.

A commit's changes come from the merged rows of the file groups it touched, before it and with it (a file group
it replaced has none after it): a key (value and record key) only before is removed, only after is added. Keys
carry no location, so a row a commit moves between file groups with its value unchanged changes nothing, and the
table services (compaction, clean), which change no row, write none.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config.table_config import TableConfig
from hudi_ds.errors import UnsupportedTableError
from hudi_ds.files.naming import log_file_name, parse_base_file
from hudi_ds.files.view import Visibility
from hudi_ds.metadata import records as md
from hudi_ds.metadata.hfiles import (
    encode_base_file,
    encode_delete_log_block,
    encode_encoded_base_file,
    encode_encoded_log_block,
)
from hudi_ds.metadata.layout import WRITE_TOKEN, MetadataTable, listed_partitions
from hudi_ds.metadata.listing import MetadataSlice, files_slice, merged_records
from hudi_ds.metadata.secondary_index import (
    SecondaryIndex,
    decode,
    expected_keys,
    file_group_numbers,
    file_group_of,
    live_values,
    read_index,
    secondary_indexes,
    value_texts,
)
from hudi_ds.read.query import TableSnapshot, snapshot
from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat


@dataclass(frozen=True)
class IndexChanges:
    """What one data instant changes in one secondary index: keys added and keys removed."""

    index: SecondaryIndex
    added: list[str]
    removed: list[str]


def check_columns(storage: Storage, partitions: list[str], schemas: Sequence[pa.Schema | None]) -> None:
    """Before a write changes anything: the column of each secondary index among the table's metadata
    `partitions` must be in the table (`schemas`: the table's and the write's, either None) with a type whose
    index text hudi_ds writes as Hudi does."""
    for index in secondary_indexes(storage, partitions):
        fields = [s.field(index.column) for s in schemas if s is not None and index.column in s.names]
        if not fields and any(s is not None for s in schemas):
            raise UnsupportedTableError(f"the secondary index {index.partition} covers column {index.column!r}, "
                                        "which the table does not have")
        for f in fields:
            value_texts(pa.nulls(0, f.type), f"secondary index {index.partition} (column {index.column!r})")


def _group_rows(snap: TableSnapshot, vis: Visibility, groups: set[tuple[str, str]],
                columns: Sequence[str]) -> pa.Table:
    """The merged rows (record key and `columns`) of the latest slices of `groups` as `vis` sees them."""
    full = snap.full_schema()
    schema = snap.read_schema(full, [RECORD_KEY, *columns], [], merges=snap.config.is_mor)
    reader = snap.reader(vis, schema)
    view = snap.view(vis, {p for p, _ in groups}.__contains__)
    wanted = [RECORD_KEY, *columns]
    tables = [reader.read(sl, snap.config.is_mor).select(wanted) for sl in view.slices_in(sorted(groups))]
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else pa.schema([full.field(c) for c in wanted]).empty_table()


def _keys(rows: pa.Table, index: SecondaryIndex) -> pa.Array:
    return expected_keys(rows[RECORD_KEY], value_texts(rows[index.column], index.partition))


def instant_changes(storage: Storage, config: TableConfig, timeline: Timeline, instant: str,
                    meta: CommitMetadata) -> list[IndexChanges]:
    """The secondary index changes of the data commit `meta` at `instant` (pending on `timeline`, its files
    written); empty when the table has no secondary index (`config`'s partitions name none; else its
    hoodie.properties are read afresh: a writer may have dropped the metadata table since)."""
    if not any(p.startswith(md.SECONDARY_INDEX_PREFIX) for p in config.metadata_partitions):
        return []
    indexes = secondary_indexes(storage, listed_partitions(storage))
    if not indexes:
        return []
    replaced = {(p, f) for p, ids in (meta.partition_to_replace_file_ids or {}).items() for f in ids}
    written = {(s.partition_path or "", s.file_id) for s in meta.write_stats() if s.path}
    if not written and not replaced:
        return []
    snap = TableSnapshot(storage, config, timeline)
    vis = Visibility.of(timeline, None, timeline.layout)
    columns = sorted({i.column for i in indexes})
    before = _group_rows(snap, vis, written | replaced, columns)
    after = _group_rows(snap, vis.with_pending(instant), written - replaced, columns)
    out = []
    for index in indexes:
        old, new = _keys(before, index), _keys(after, index)
        added = pc.unique(new.filter(pc.invert(pc.is_in(new, old))))
        removed = pc.unique(old.filter(pc.invert(pc.is_in(old, new))))
        out.append(IndexChanges(index, added.to_pylist(), removed.to_pylist()))
    return out


def table_changes(storage: Storage, config: TableConfig, timeline: Timeline,
                  mdt: MetadataTable) -> list[IndexChanges]:
    """What brings each secondary index to the table's snapshot (`timeline`'s completed commits): its keys no
    row has removed, the rows' keys it lacks added. For a rollback of a data instant whose deltacommit the
    metadata table's compaction already folded (its files are gone, so its changes cannot be read back)."""
    indexes = secondary_indexes(storage, listed_partitions(storage))
    if not indexes:
        return []
    snap = TableSnapshot(storage, config, timeline)
    rows = snapshot(snap, columns=[RECORD_KEY, *sorted({i.column for i in indexes})])
    out = []
    for index in indexes:
        expected = _keys(rows, index)
        held = pa.array(read_index(mdt, timeline, index).keys, pa.string())
        out.append(IndexChanges(index, pc.unique(expected.filter(pc.invert(pc.is_in(expected, held)))).to_pylist(),
                                held.filter(pc.invert(pc.is_in(held, expected))).to_pylist()))
    return out


# ------------------------------------------------------------------------------- the metadata table's files


def _sorted(keys: list[str]) -> list[str]:
    return sorted(keys, key=lambda k: k.encode("utf-8"))  # HFile order: the keys' bytes


def write_logs(mdt: MetadataTable, instant: str, changes: Sequence[IndexChanges]) -> dict[str, list[WriteStat]]:
    """The deltacommit `instant`'s log files of the secondary indexes (one per file group a change lands in);
    their write stats by metadata partition."""
    out: dict[str, list[WriteStat]] = {}
    for change in changes:
        if not change.added and not change.removed:
            continue
        index = change.index
        count = len(file_group_numbers(index, [e.name for e in mdt.storage.list(index.partition) if not e.is_dir]))
        added: dict[int, list[str]] = {}
        removed: dict[int, list[str]] = {}
        for keys, by_group in ((change.added, added), (change.removed, removed)):
            for key in keys:
                by_group.setdefault(file_group_of(index, key, count), []).append(key)
        stats = []
        for number in sorted({*added, *removed}):
            data = b""
            if number in added:
                keys = _sorted(added[number])
                data += encode_encoded_log_block(pa.array(keys, pa.string()), live_values(len(keys)), mdt.version,
                                                 instant)
            if number in removed:
                data += encode_delete_log_block(_sorted(removed[number]), index.partition, instant)
            name = log_file_name(index.file_group_id(number), instant, 1, WRITE_TOKEN)
            rel = f"{index.partition}/{name}"
            mdt.storage.write_bytes(rel, data)
            inserts, deletes = len(added.get(number, [])), len(removed.get(number, []))
            stats.append(WriteStat(file_id=index.file_group_id(number), path=rel, prev_commit="null",
                                   num_writes=inserts + deletes, num_inserts=inserts, num_deletes=deletes,
                                   total_write_bytes=len(data), partition_path=index.partition,
                                   file_size_in_bytes=len(data), is_log=True, log_version=1, base_file="",
                                   log_files=[name], total_log_blocks=int(inserts > 0) + int(deletes > 0),
                                   total_log_records=inserts + deletes))
        out[index.partition] = stats
    return out


# ------------------------------------------------------------------------ the metadata table's compaction


def partitions(mdt: MetadataTable) -> list[str]:
    """The secondary index partitions the metadata table holds (folders), listed or not."""
    return sorted(e.name for e in mdt.storage.list("") if e.is_dir and e.name.startswith(md.SECONDARY_INDEX_PREFIX))


def compaction_slices(mdt: MetadataTable, mdt_timeline: Timeline) -> list[tuple[SecondaryIndex, int, MetadataSlice]]:
    """Every secondary index file group's slice, for a compaction of the metadata table to fold (all of them,
    as the record index's: their base files then keep the files partition's instants)."""
    out = []
    for partition in partitions(mdt):
        index = SecondaryIndex(partition, "", 1)  # its file group ids only: no column or hashing needed
        listed = [e for e in mdt.storage.list(partition) if not e.is_dir]
        for number in file_group_numbers(index, [e.name for e in listed]):
            out.append((index, number, files_slice(mdt, mdt_timeline, None, listed, partition,
                                                   index.file_group_id(number))))
    return out


def compact(mdt: MetadataTable, slices: Sequence[tuple[SecondaryIndex, int, MetadataSlice]],
            instant: str) -> dict[str, list[WriteStat]]:
    """Fold each of `slices` into an HFile base file at the compaction `instant`."""
    out: dict[str, list[WriteStat]] = {}
    for index, number, sl in slices:
        records = merged_records(mdt, sl, decoder=decode)
        rel = f"{index.partition}/{index.file_group_id(number)}_{WRITE_TOKEN}_{instant}.hfile"
        if all(r == md.secondary_index_record(k) for k, r in records.items()):  # the live entries' bytes
            keys = pa.array(_sorted(list(records)), pa.string())
            data = encode_encoded_base_file(keys, live_values(len(keys)), mdt.version)
        else:
            data = encode_base_file(records, mdt.version)
        mdt.storage.write_bytes(rel, data)
        out.setdefault(index.partition, []).append(WriteStat(
            file_id=index.file_group_id(number), path=rel, prev_commit=sl.base_instant or "null",
            num_writes=len(records), total_write_bytes=len(data), partition_path=index.partition,
            file_size_in_bytes=len(data), total_log_files_compacted=len(sl.logs)))
    return out


def undo_compaction(mdt: MetadataTable, instant: str) -> None:
    """Delete the base files a compaction at `instant` its writer did not finish may have written."""
    for partition in partitions(mdt):
        for entry in mdt.storage.list(partition):
            base = parse_base_file(partition, entry.name)
            if base is not None and base.instant == instant:
                mdt.storage.delete(entry.path)

