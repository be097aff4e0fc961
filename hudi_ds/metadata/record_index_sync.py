"""Keeping the metadata table's `record_index` partition in step with the data table, as Hudi 1.x's metadata
writer does: each data instant's deltacommit carries, per record index file group, a log file of the locations
of the keys the instant inserted or moved (an HFile data block) and of the keys it removed (a DELETE block);
its compaction folds them into HFile base files; enabling the index on an existing table writes every key's
location into the file groups' first base files.

A commit's changes come from the files it wrote: a new base file's keys are all new; a rewritten base file that
took inserts or deletes is compared with the base file it replaces; a log file's DELETE blocks remove keys and its
data blocks place them; an overwrite removes the keys of the file groups it replaces. A
key placed anywhere in the instant wins over its removal elsewhere (a partition move of a global index).
"""

from __future__ import annotations

import dataclasses
import math
import time
from collections.abc import Iterable, Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.config.table_config import TableConfig, load_config
from hudi_ds.errors import ConfigError
from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.naming import PARTITION_METAFILE, log_file_name, parse_base_file
from hudi_ds.files.view import FileSystemView, Visibility
from hudi_ds.hfile.avro_records import encode_values
from hudi_ds.index.lookup import LIVE, PARTITION, SLOT, KeyLookup
from hudi_ds.log import (
    BlockType,
    decode_avro_data_block,
    decode_delete_block,
    decode_parquet_data_block,
    read_blocks,
)
from hudi_ds.metadata import record_index_codec as codec
from hudi_ds.metadata import records as md
from hudi_ds.metadata.avro_schema import metadata_schema_json
from hudi_ds.metadata.bootstrap import _write_data_partitions as write_data_partitions
from hudi_ds.metadata.hfiles import (
    encode_delete_log_block,
    encode_encoded_base_file,
    encode_encoded_log_block,
)
from hudi_ds.metadata.index_defs import add_record_index, remove_record_index
from hudi_ds.metadata.layout import WRITE_TOKEN, MetadataTable, listed_partitions, partition_metafile
from hudi_ds.metadata.listing import MetadataSlice, files_slice
from hudi_ds.metadata.record_index import (
    Places,
    file_group_count,
    file_group_id,
    file_groups_of,
    slice_entries,
)
from hudi_ds.metadata.record_index_entries import group_coded_entries, group_entries
from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S
from hudi_ds.timeline import Timeline
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_ds.timeline.instant import instant_to_datetime

# The record index's own initialising instant (Hudi's SOLO_COMMIT_TIMESTAMP with the partition's index 002, as
# the reference tables show): a deltacommit of the metadata table that readers take though the data timeline
# has no such instant.
INIT_INSTANT = "00000000000000002"
AVERAGE_RECORD_SIZE = 48  # bytes per record index entry, HoodieTableMetadataUtil's estimate
ENCODE_THREADS = 2  # file groups' files encoded at once


@dataclass(frozen=True)
class RecordIndexSettings:
    """How many file groups a new record index gets (HoodieMetadataConfig's record index keys)."""

    min_file_groups: int = 10
    max_file_groups: int = 10_000
    max_file_group_bytes: int = 1 << 30
    growth_factor: float = 2.0

    def file_groups_for(self, record_count: int) -> int:
        """HoodieTableMetadataUtil.estimateFileGroupCount: room for `growth_factor` times the keys, each file
        group under `max_file_group_bytes`, within [min, max]."""
        if self.min_file_groups == self.max_file_groups:
            return self.min_file_groups
        expected = math.ceil(record_count * self.growth_factor)
        per_group = max(1, self.max_file_group_bytes // AVERAGE_RECORD_SIZE)
        estimate = expected // per_group
        return max(1, min(self.max_file_groups, max(self.min_file_groups, estimate)))


@dataclass
class RecordIndexChanges:
    """What one data instant changes in the record index, as key columns: keys placed in a (partition, file
    id), keys removed."""

    placed: list[tuple[pa.Array, str, str]] = field(default_factory=list)  # keys, partition, file id
    removed: list[pa.Array] = field(default_factory=list)

    def place(self, keys: pa.Array, partition: str, file_id: str) -> None:
        self.placed.append((keys, partition, file_id))

    def remove(self, keys: pa.Array) -> None:
        self.removed.append(keys)

    def settled(self) -> SettledChanges:
        """The changes with every key placed anywhere taken out of the removals."""
        keys = pa.concat_arrays([_EMPTY, *(k for k, _, _ in self.placed)])
        codes = np.repeat(np.arange(len(self.placed), dtype=np.int64), [len(k) for k, _, _ in self.placed])
        gone = pc.unique(pa.concat_arrays([_EMPTY, *self.removed]))
        if len(gone) and len(keys):  # (a set of a load's every key only to find nothing removed: skipped)
            gone = gone.filter(pc.invert(pc.is_in(gone, keys)))
        return SettledChanges(keys, codes, [(p, f) for _, p, f in self.placed], gone)


@dataclass(frozen=True)
class SettledChanges:
    """An instant's record index changes: `keys` placed at `places[codes[i]]` (a key placed twice where it
    was placed last), `removed` keys."""

    keys: pa.Array
    codes: np.ndarray
    places: list[tuple[str, str]]
    removed: pa.Array


_EMPTY = pa.array([], pa.string())


# --------------------------------------------------------------------------------- changes of a data instant


def _base_keys(storage: Storage, rel: str) -> pa.Array:
    with open_base_file(storage, rel) as pf:
        return pf.read(columns=[RECORD_KEY])[RECORD_KEY].combine_chunks().cast(pa.string())


def _replaced_base(storage: Storage, partition: str, file_id: str, instant: str) -> str | None:
    for entry in storage.list(partition):
        base = parse_base_file(partition, entry.name)
        if base is not None and base.file_id == file_id and base.instant == instant:
            return entry.path
    return None


def _log_changes(storage: Storage, rel: str) -> tuple[list[pa.Array], list[pa.Array]]:
    """Keys a log file's data blocks write and its DELETE blocks remove (a log's writer may not know which of
    its keys are new: the bucket index sends inserts and updates alike to a log)."""
    key_schema = pa.schema([pa.field(RECORD_KEY, pa.string())])
    written: list[pa.Array] = []
    deleted: list[pa.Array] = []
    for block in read_blocks(storage.read_bytes(rel), storage.full(rel)):
        if block.block_type == BlockType.DELETE:
            deleted.append(_strings(decode_delete_block(block, rel).record_keys))
        elif block.block_type == BlockType.AVRO_DATA:
            written.append(_strings(decode_avro_data_block(block, rel, key_schema)[RECORD_KEY]))
        elif block.block_type == BlockType.PARQUET_DATA:
            written.append(_strings(decode_parquet_data_block(block, rel, key_schema)[RECORD_KEY]))
    return written, deleted


def _strings(column: pa.Array | pa.ChunkedArray) -> pa.Array:
    """A key column as one string array without nulls."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return pc.drop_null(column.cast(pa.string()))


def _live_keys(storage: Storage, config: TableConfig, timeline: Timeline,
               groups: Mapping[str, Sequence[str]]) -> pa.Array:
    """The keys the latest committed slices of `groups` (partition -> file ids) hold."""
    visibility = Visibility.of(timeline, None, timeline.layout)
    view = FileSystemView(storage, config, timeline, visibility, partition_filter=lambda p: p in groups)
    slices = view.slices_in((p, f) for p, ids in groups.items() for f in ids)
    by_partition: dict[str, tuple[Any, ...]] = {}
    for sl in slices:
        by_partition[sl.partition] = (*by_partition.get(sl.partition, ()), sl)
    lookup = KeyLookup(True, False, by_partition, visibility, None)
    located = lookup.located(storage, by_partition)
    return _strings(located.filter(located[LIVE])[RECORD_KEY])


def commit_record_changes(storage: Storage, config: TableConfig, timeline: Timeline, stats: Iterable[WriteStat],
                          replaced: Mapping[str, Sequence[str]]) -> SettledChanges:
    """The record index changes of a commit that wrote `stats` and replaced the file groups `replaced`
    (partition -> file ids), read from the files it wrote (`timeline`: the data timeline, the commit pending)."""
    changes = RecordIndexChanges()
    for stat in stats:
        if not stat.path:
            continue
        partition, file_id = stat.partition_path or "", stat.file_id
        if stat.is_log:
            placed, deleted = _log_changes(storage, stat.path)
            for keys in placed:
                changes.place(keys, partition, file_id)
            for keys in deleted:
                changes.remove(keys)
        elif stat.prev_commit in ("", "null", None):
            changes.place(_base_keys(storage, stat.path), partition, file_id)
        elif stat.num_inserts or stat.num_deletes:
            now = _base_keys(storage, stat.path)
            old_rel = _replaced_base(storage, partition, file_id, stat.prev_commit)
            before = _base_keys(storage, old_rel) if old_rel is not None else _EMPTY
            changes.place(now.filter(pc.invert(pc.is_in(now, before))), partition, file_id)
            changes.remove(before.filter(pc.invert(pc.is_in(before, now))))
    if replaced:
        changes.remove(_live_keys(storage, config, timeline, replaced))
    return changes.settled()


def instant_changes(storage: Storage, config: TableConfig, timeline: Timeline,
                    meta: CommitMetadata) -> SettledChanges | None:
    """The record index changes of the data commit `meta` (pending on `timeline`); None when the table has no
    record index (its hoodie.properties read afresh)."""
    if md.RECORD_INDEX not in listed_partitions(storage):
        return None
    stats = [s for ss in meta.partition_to_write_stats.values() for s in ss]
    return commit_record_changes(storage, config, timeline, stats, meta.partition_to_replace_file_ids or {})


# ------------------------------------------------------------------------------- the metadata table's files


def _instant_ms(instant: str) -> int:
    return int(instant_to_datetime(instant).timestamp() * 1000)


def log_name(index: int, instant: str) -> str:
    return log_file_name(file_group_id(index), instant, 1, WRITE_TOKEN)


def base_name(index: int, instant: str) -> str:
    return f"{file_group_id(index)}_{WRITE_TOKEN}_{instant}.hfile"


def write_logs(mdt: MetadataTable, instant: str, changes: SettledChanges) -> list[WriteStat]:
    """The deltacommit `instant`'s log files of the record index (one per file group it changes); their
    write stats."""
    count = file_group_count(mdt.storage.list(md.RECORD_INDEX))
    if not count or not (len(changes.keys) or len(changes.removed)):
        return []
    ms = _instant_ms(instant)
    placed = group_coded_entries(changes.keys, changes.codes, changes.places, count, mdt.version, ms)
    gone = changes.removed.take(pc.sort_indices(changes.removed.cast(pa.binary())))
    gone_groups = np.asarray(file_groups_of(gone, count), dtype=np.int64)
    removed = {index: gone.filter(pa.array(gone_groups == index)).to_pylist()
               for index in np.unique(gone_groups).tolist()}
    def written(index: int) -> tuple[str, bytes]:
        data = b""
        if index in placed:
            data += encode_encoded_log_block(*placed[index], mdt.version, instant)
        if index in removed:
            data += encode_delete_log_block(removed[index], md.RECORD_INDEX, instant)
        rel = f"{md.RECORD_INDEX}/{log_name(index, instant)}"
        mdt.storage.write_bytes(rel, data)
        return rel, data

    stats = []
    indexes = sorted({*placed, *removed})
    with ThreadPoolExecutor(ENCODE_THREADS) as pool:  # gzip, most of the cost, releases the GIL
        files = list(pool.map(written, indexes))
    for index, (rel, data) in zip(indexes, files, strict=True):
        inserts = len(placed[index][0]) if index in placed else 0
        n = inserts + len(removed.get(index, []))
        stats.append(WriteStat(file_id=file_group_id(index), path=rel, prev_commit="null", num_writes=n,
                               num_inserts=inserts, num_deletes=len(removed.get(index, [])),
                               total_write_bytes=len(data), partition_path=md.RECORD_INDEX,
                               file_size_in_bytes=len(data), is_log=True, log_version=1, base_file="",
                               log_files=[rel.rsplit("/", 1)[-1]], total_log_blocks=int(index in placed)
                               + int(index in removed), total_log_records=n))
    return stats


def write_base_files(mdt: MetadataTable, instant: str, locations: Mapping[str, tuple[str, str, int]],
                     count: int) -> list[WriteStat]:
    """`count` file groups' base files at `instant` holding `locations` (key -> partition, file id, epoch ms)."""
    groups = group_entries(list(locations), list(locations.values()), count, mdt.version)
    nothing = (pa.array([], pa.string()), pa.array([], pa.binary()))
    created = int(time.time() * 1000)
    stats = []
    for index in range(count):
        keys, values = groups.get(index, nothing)
        rel = f"{md.RECORD_INDEX}/{base_name(index, instant)}"
        data = encode_encoded_base_file(keys, values, mdt.version, created_ms=created)
        mdt.storage.write_bytes(rel, data)
        stats.append(WriteStat(file_id=file_group_id(index), path=rel, prev_commit="null", num_writes=len(keys),
                               num_inserts=len(keys), total_write_bytes=len(data),
                               partition_path=md.RECORD_INDEX, file_size_in_bytes=len(data)))
    return stats


def table_locations(storage: Storage, config: TableConfig, timeline: Timeline) -> dict[str, tuple[str, str, int]]:
    """Every key of the table's latest committed slices -> (partition, file id, epoch ms of the slice's commit)
    (a bootstrap's content). A key held in several partitions (a non-global index) keeps its newest copy."""
    if not config.populate_meta_fields:
        raise ConfigError("hoodie.metadata.record.index.enable=true: the table does not store its record keys "
                          "(hoodie.populate.meta.fields=false); hudi_ds builds the record index from them")
    visibility = Visibility.of(timeline, None, timeline.layout)
    view = FileSystemView(storage, config, timeline, visibility)
    by_partition: dict[str, tuple[Any, ...]] = {}
    instants: dict[tuple[str, str], str] = {}
    for sl in view.latest_slices():
        by_partition[sl.partition] = (*by_partition.get(sl.partition, ()), sl)
        instants[(sl.partition, sl.file_id)] = max([sl.base_instant or "", *(lf.instant for lf in sl.log_files)])
    lookup = KeyLookup(True, False, by_partition, visibility, None)
    located = lookup.located(storage, by_partition)
    located = located.filter(located[LIVE])
    out: dict[str, tuple[str, str, int]] = {}
    slices = {p: [sl.file_id for sl in s] for p, s in by_partition.items()}
    keys = located[RECORD_KEY].to_pylist()
    parts = located[PARTITION].to_pylist()
    slots = pc.cast(located[SLOT], pa.int64()).to_pylist()
    for key, partition, slot in zip(keys, parts, slots, strict=True):
        file_id = slices[partition][slot]
        instant = instants[(partition, file_id)]
        previous = out.get(key)
        ms = _instant_ms(instant) if instant else 0
        if previous is None or previous[2] <= ms:
            out[key] = (partition, file_id, ms)
    return out


def compaction_slices(mdt: MetadataTable, mdt_timeline: Timeline) -> list[tuple[int, MetadataSlice]]:
    """Every record index file group's slice, for a compaction of the metadata table to fold: all of them, so
    their base files keep the instants of the files partition's (its clean and archiving then keep a valid base
    file of each)."""
    if not mdt.storage.exists(md.RECORD_INDEX):
        return []
    listed = [e for e in mdt.storage.list(md.RECORD_INDEX) if not e.is_dir]
    return [(index, files_slice(mdt, mdt_timeline, None, listed, md.RECORD_INDEX, file_group_id(index)))
            for index in range(file_group_count(listed))]


def compact(mdt: MetadataTable, slices: Sequence[tuple[int, MetadataSlice]], instant: str) -> list[WriteStat]:
    """Fold each of `slices` into a base file at the compaction `instant`: the slice's entries merged as
    columns, each distinct record encoded once."""
    stats = []
    schema = metadata_schema_json(mdt.version)
    for index, sl in slices:
        places = Places()
        keys, codes = slice_entries(mdt, sl, places)
        _, encoded = encode_values({str(i): r for i, r in enumerate(places.records)}, schema, codec.encode)
        rel = f"{md.RECORD_INDEX}/{base_name(index, instant)}"
        data = encode_encoded_base_file(keys, encoded.take(codes), mdt.version)
        mdt.storage.write_bytes(rel, data)
        stats.append(WriteStat(file_id=file_group_id(index), path=rel, prev_commit=sl.base_instant or "null",
                               num_writes=len(keys), total_write_bytes=len(data), partition_path=md.RECORD_INDEX,
                               file_size_in_bytes=len(data), total_log_files_compacted=len(sl.logs)))
    return stats


def undo_compaction(mdt: MetadataTable, instant: str) -> None:
    """Delete the base files a compaction at `instant` its writer did not finish may have written."""
    if mdt.storage.exists(md.RECORD_INDEX):
        for entry in mdt.storage.list(md.RECORD_INDEX):
            base = parse_base_file(md.RECORD_INDEX, entry.name)
            if base is not None and base.instant == instant:
                mdt.storage.delete(entry.path)


# ------------------------------------------------------------------------------------ enabling and dropping


def planned_partitions(config: TableConfig, enable: bool | None) -> TableConfig:
    """The table's config as hoodie.metadata.record.index.enable will make it (for the checks a write makes
    before it changes anything): ConfigError when the table cannot have a record index."""
    if enable is None:
        return config
    partitions = [p for p in config.metadata_partitions if p != md.RECORD_INDEX]
    if enable:
        if md.FILES not in partitions:
            raise ConfigError("hoodie.metadata.record.index.enable=true needs the metadata table: set "
                              "hoodie.metadata.enable=true as well (the record index is one of its partitions)")
        if not config.populate_meta_fields:
            raise ConfigError("hoodie.metadata.record.index.enable=true: the table does not store its record keys "
                              "(hoodie.populate.meta.fields=false), which the record index is built from; leave "
                              "it off")
        partitions = sorted([*partitions, md.RECORD_INDEX])
    return dataclasses.replace(config, metadata_partitions=partitions)


def apply_record_index_setting(storage: Storage, config: TableConfig, enable: bool | None,
                               settings: RecordIndexSettings) -> TableConfig:
    """Make the metadata table's record index follow hoodie.metadata.record.index.enable: True builds it from
    the table's keys, False drops it, None keeps what the table has. Returns the table's config afterwards.

    Like the files partition's bootstrap, the record index is listed in `hoodie.table.metadata.partitions` only
    once its base files and instant are complete, under the commit lock: a bootstrap killed midway is invisible
    and the next one starts afresh."""
    planned_partitions(config, enable)
    if enable is None or (md.RECORD_INDEX in listed_partitions(storage)) == enable:
        return config
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        listed = listed_partitions(storage)
        if enable and md.RECORD_INDEX not in listed:
            _bootstrap(storage, config, settings)
            write_data_partitions(storage, sorted({*listed, md.RECORD_INDEX}))
        elif not enable and md.RECORD_INDEX in listed:
            write_data_partitions(storage, [p for p in listed if p != md.RECORD_INDEX])
            MetadataTable.open(storage).storage.delete_dir(md.RECORD_INDEX)
            remove_record_index(storage)
    return load_config(storage)


def rebuild_after_version_change(storage: Storage, config: TableConfig) -> TableConfig:
    """Build the record index again once a version change rebuilt the metadata table it dropped (the caller
    holds the commit lock); a crash before this leaves the table without it, as hoodie.metadata.record.index.enable
    unset keeps it (the next write with it true, or with RECORD_INDEX, builds it)."""
    listed = listed_partitions(storage)
    if md.FILES not in listed or md.RECORD_INDEX in listed:
        return config
    _bootstrap(storage, config, RecordIndexSettings())
    write_data_partitions(storage, sorted({*listed, md.RECORD_INDEX}))
    return load_config(storage)


def _bootstrap(storage: Storage, config: TableConfig, settings: RecordIndexSettings) -> None:
    mdt = MetadataTable.open(storage)
    mdt.storage.delete_dir(md.RECORD_INDEX)  # what a killed bootstrap left
    writer = mdt.fmt.timeline_writer(mdt.storage)
    writer.delete_instant_files(INIT_INSTANT, "deltacommit")
    locations = table_locations(storage, config, config.format.load_timeline(storage))
    writer.create_requested(INIT_INSTANT, "deltacommit")
    writer.transition_to_inflight(INIT_INSTANT, "deltacommit")
    mdt.storage.put_if_absent(f"{md.RECORD_INDEX}/{PARTITION_METAFILE}", partition_metafile(INIT_INSTANT))
    stats = write_base_files(mdt, INIT_INSTANT, locations, settings.file_groups_for(len(locations)))
    meta = CommitMetadata(partition_to_write_stats={md.RECORD_INDEX: stats}, operation_type="BULK_INSERT")
    writer.complete(INIT_INSTANT, "deltacommit", mdt.fmt.encode_commit_metadata(meta, "deltacommit"))
    add_record_index(storage, config.version)
