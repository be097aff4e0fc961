"""The file listing a metadata table's `files` partition holds, read as Hudi's readers read it.

The file slice is the latest base file of a completed bootstrap or compaction, then the log files of the
deltacommits that completed after it, in completion order (file slicing by completion time, as for any
version 8/9 table). A deltacommit counts only when its data instant completed on the data timeline too (the
metadata table is written first; a writer killed in between leaves a deltacommit no reader takes), except the
metadata table's own bootstrap instants (HoodieTableMetadataUtil.getValidInstantTimestamps).
"""

from __future__ import annotations

from collections.abc import Collection, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote

from hudi_ds.errors import CorruptTableError, MissingFileError
from hudi_ds.files.naming import parse_base_file, parse_log_file
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.hfile.avro_records import Decoder
from hudi_ds.log import BlockType, decode_delete_block, read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block
from hudi_ds.metadata import records as md
from hudi_ds.metadata.layout import FILES_FILE_ID, MetadataTable, is_init_instant
from hudi_ds.storage import FileEntry, require_inside
from hudi_ds.timeline import Instant, Timeline

FETCH_THREADS = 16  # the files of one metadata slice: a base file and at most a compaction's worth of logs


def compacted_before(mdt_timeline: Timeline) -> str:
    """The requested time of the latest completed compaction of the metadata table ("" when none): deltacommits
    that completed before it are folded into its base file."""
    done = [i.requested_time for i in mdt_timeline.completed() if i.action == "commit"]
    return max(done, default="")


def is_folded(inst: Instant, folded_before: str) -> bool:
    """Whether the deltacommit `inst` is folded into the base file of the compaction at `folded_before`."""
    return inst.is_completed and (inst.completion_time or "") < folded_before


@dataclass(frozen=True)
class MetadataSlice:
    """The metadata files a reader merges: the base file (relative path, instant) and the log files in order."""

    base: str | None
    base_instant: str
    logs: list[tuple[str, str]]  # (relative path, instant), oldest completion first


def files_slice(mdt: MetadataTable, mdt_timeline: Timeline, data_timeline: Timeline | None,
                listed: list[FileEntry] | None = None, partition: str = md.FILES,
                file_id: str = FILES_FILE_ID) -> MetadataSlice:
    """The latest slice of the files partition (from `listed`, its listing, when the caller has it), or of
    another metadata partition's file group `file_id`. `data_timeline` None: every completed deltacommit counts
    (the metadata table's own view, as its compaction takes it)."""
    completion = {i.requested_time: i.completion_time or "" for i in mdt_timeline.completed()
                  if i.action in ("deltacommit", "commit")}
    bases: list[tuple[str, str]] = []
    logs: list[tuple[str, str, str]] = []
    for entry in mdt.storage.list(partition) if listed is None else listed:
        if entry.is_dir:
            continue
        rel = require_inside(f"{partition}/{entry.name}", mdt.storage.full(partition))
        base = parse_base_file(partition, entry.name)
        log = parse_log_file(partition, entry.name)
        if base is not None and base.file_id == file_id and base.instant in completion:
            bases.append((base.instant, rel))
        elif log is not None and log.file_id == file_id and log.instant in completion and (
                data_timeline is None or is_init_instant(log.instant)
                or data_timeline.contains_completed(log.instant)):
            logs.append((completion[log.instant], log.instant, rel))
    base_instant, base_rel = max(bases) if bases else ("", None)
    after = sorted((c, i, r) for c, i, r in logs if c > base_instant and i != base_instant)
    return MetadataSlice(base_rel, base_instant, [(r, i) for _, i, r in after])


def _log_updates(data: bytes, where: str, keys: Collection[str] | None = None,
                 decoder: Decoder | None = None) -> Iterator[tuple[str, dict[str, Any] | None]]:
    for block in read_blocks(data, where):
        if block.block_type == BlockType.HFILE_DATA:
            reader = decode_hfile_data_block(block, where, decoder)
            yield from reader if keys is None else reader.select(keys)
        elif block.block_type == BlockType.DELETE:
            deleted = decode_delete_block(block, where).record_keys.to_pylist()
            yield from ((key, None) for key in deleted if keys is None or key in keys)


def read_slice_files(mdt: MetadataTable, rels: list[str]) -> list[bytes]:
    """The files of a slice, fetched at once (one round trip on an object store, not one per file). One a
    writer's clean of the metadata table removed meanwhile is a MissingFileError: the read plans again."""
    def read(rel: str) -> bytes:
        try:
            return mdt.storage.read_bytes(rel)
        except FileNotFoundError:
            raise MissingFileError(f"{mdt.storage.full(rel)} is gone: a writer compacted and cleaned the metadata "
                                   "table while it was read; read again") from None

    if len(rels) <= 1:
        return [read(rel) for rel in rels]
    with ThreadPoolExecutor(min(FETCH_THREADS, len(rels))) as pool:
        return list(pool.map(read, rels))


def merged_records(mdt: MetadataTable, sl: MetadataSlice, keys: Collection[str] | None = None,
                   decoder: Decoder | None = None) -> dict[str, dict[str, Any]]:
    """Key -> merged record of the slice (HoodieMetadataPayload's merge); of `keys` only, when given
    (`decoder`: a fast path for the partition's records, hudi_ds.hfile.avro_records)."""
    rels = ([sl.base] if sl.base is not None else []) + [rel for rel, _ in sl.logs]
    fetched = dict(zip(rels, read_slice_files(mdt, rels), strict=True))
    base: list[tuple[str, dict[str, Any]]] = []
    if sl.base is not None:
        reader = AvroHFileReader(fetched[sl.base], mdt.storage.full(sl.base), decoder=decoder)
        base = list(reader if keys is None else reader.select(keys))
    updates = [u for rel, _ in sl.logs for u in _log_updates(fetched[rel], mdt.storage.full(rel), keys, decoder)]
    return md.merge(base, updates)


def listing_of(records: dict[str, dict[str, Any]], where: str) -> dict[str, dict[str, int]]:
    """Data partition -> file name -> size, from the merged records of the files partition."""
    all_partitions = records.get(md.ALL_PARTITIONS_KEY)
    if all_partitions is None:
        raise CorruptTableError(f"{where} has no {md.ALL_PARTITIONS_KEY} record: drop the metadata table (a write "
                                "with hoodie.metadata.enable=false) and enable it again")
    out: dict[str, dict[str, int]] = {}
    for partition in md.listed_partitions(all_partitions):
        record = records.get(md.partition_key(partition))
        out[partition] = md.listed_files(record) if record is not None else {}
    # a partition a delete_partition dropped leaves the list but its files stay listed until a clean deletes them:
    # their file groups are replaced in the latest snapshot, and time travel to before the drop still finds them
    for key, record in records.items():
        if key != md.ALL_PARTITIONS_KEY and (partition := md.partition_path(key)) not in out:
            if files := md.listed_files(record):
                out[partition] = files
    return out


def read_listing(mdt: MetadataTable, data_timeline: Timeline) -> dict[str, dict[str, int]]:
    """What a Hudi reader takes from the metadata table: data partition -> file name -> size. The files
    partition is listed while the metadata timeline loads (one round trip less on an object store): a file of
    an instant that completes in between is not on that timeline, so not taken."""
    with ThreadPoolExecutor(1) as pool:
        listed = pool.submit(mdt.storage.list, md.FILES)
        sl = files_slice(mdt, mdt.timeline(), data_timeline, listed.result())
    return listing_of(merged_records(mdt, sl), mdt.storage.full(md.FILES))


def data_files(mdt: MetadataTable, data_timeline: Timeline) -> list[FileEntry]:
    """The data table's files as the metadata table lists them, shaped like a walk of storage (paths relative
    to the table): what a reader plans from instead of listing every data partition. The names are the
    table's own, so untrusted: one that would leave its partition folder is a CorruptTableError."""
    where = mdt.storage.full(md.FILES)
    out: list[FileEntry] = []
    for partition, files in read_listing(mdt, data_timeline).items():
        if partition:
            require_inside(f"{partition}/", where)
        for name, size in files.items():
            if not _is_plain_name(name):
                raise CorruptTableError(f"refusing file name {name!r} of partition {partition!r} (listed in "
                                        f"{where}): not a file name; drop the metadata table (a write with "
                                        "hoodie.metadata.enable=false) and enable it again")
            out.append(FileEntry(f"{partition}/{name}" if partition else name, size, False))
    return out


def _is_plain_name(name: str) -> bool:
    """A file name that stays in its folder (the partition itself checked once with require_inside)."""
    if "%" in name:
        name = unquote(name)
    return bool(name) and "/" not in name and "\\" not in name and name not in (".", "..")
