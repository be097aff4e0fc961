"""`hudi-py validate`: the table's invariants, each check reporting every problem it finds.

Errors make the command fail; warnings (pending instants, duplicate keys, dropped columns...) do not.
"""

from __future__ import annotations

import posixpath
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError, HudiDsError
from hudi_ds.files.markers import marked_files
from hudi_ds.files.naming import BaseFile, LogFile
from hudi_ds.files.view import FileSystemView, Visibility
from hudi_ds.log.cdc_block import decode_cdc_block
from hudi_ds.log.format import BlockType, read_blocks
from hudi_ds.metadata import records as md
from hudi_ds.metadata.bootstrap import committed_files
from hudi_ds.metadata.in_step import timeline_differences
from hudi_ds.metadata.layout import listed_partitions, metadata_table_of
from hudi_ds.metadata.listing import read_listing
from hudi_ds.metadata.record_index_check import index_differences
from hudi_ds.metadata.secondary_index import secondary_indexes
from hudi_ds.metadata.secondary_index_check import index_differences as secondary_index_differences
from hudi_ds.metadata.stats_check import statistics_differences
from hudi_ds.read import query
from hudi_ds.read.retention import earliest_retained
from hudi_ds.read.schema_resolver import ARROW_SCHEMA_KEY, decode_arrow_schema
from hudi_ds.schema.avro import avro_to_arrow
from hudi_ds.schema.meta import PARTITION_PATH, RECORD_KEY, strip_meta
from hudi_ds.storage.layout import heartbeat_path
from hudi_ds.table import HudiTable
from hudi_ds.timeline import State

from .report import Opened, bucket_of, data_files, open_table, uses_bucket_index

REBUILD = ("to rebuild the metadata table: hudi-py metadata drop PATH (or a write with hoodie.metadata.enable=false); "
           "the next write to a version 8/9 table builds it afresh")


@dataclass
class Check:
    name: str
    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    detail: str = ""
    skipped: bool = False

    @property
    def status(self) -> str:
        if self.skipped:
            return "skipped"
        return "failed" if self.errors else ("warning" if self.warnings else "ok")

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, "status": self.status, "detail": self.detail, "errors": self.errors,
                "warnings": self.warnings}


def _run(name: str, fn: Callable[[Check], None]) -> Check:
    check = Check(name)
    try:
        fn(check)
    except (HudiDsError, OSError, pa.ArrowException) as exc:
        check.errors.append(f"{type(exc).__name__}: {exc}")
    return check


# ---- committed files ----------------------------------------------------------------------------------------

def _missing(view: FileSystemView, committed: dict[str, str]) -> list[str]:
    """Messages for every committed file of a live slice that is missing (bisects on failure)."""
    if not committed:
        return []
    try:
        view.check_committed_files(committed)
        return []
    except CorruptTableError as exc:
        if len(committed) == 1:
            return [str(exc)]
    items = list(committed.items())
    mid = len(items) // 2
    return _missing(view, dict(items[:mid])) + _missing(view, dict(items[mid:]))


def check_committed(o: Opened, view: FileSystemView, check: Check) -> None:
    committed = view.committed_paths()
    check.errors.extend(_missing(view, committed))
    check.detail = f"{len(committed)} files listed by {len(o.timeline.commits())} completed commits"


def check_instant_files(o: Opened, check: Check) -> None:
    """A completed commit file of 0 bytes reads as a commit that wrote nothing (Apache Hudi's rule for empty
    metadata; hudi-rs refuses it). If data files carry its instant time, its metadata was lost."""
    tl = o.timeline
    empty = [i for i in tl.commits() if not tl.read_content(i).strip()]
    if not empty:
        check.detail = f"{len(tl.commits())} completed commits have metadata"
        return
    files = data_files(o.table.storage)
    for inst in empty:
        carried = [f.path for f in files if f.instant == inst.requested_time]
        name = posixpath.basename(tl.file_path(inst))
        if carried:
            check.errors.append(
                f"completed instant {name} is empty, yet {len(carried)} data file(s) carry its instant time (e.g. "
                f"{carried[0]}): its commit metadata was lost; restore {name}, or roll the commit back with "
                f"`hudi-py rollback PATH {inst.requested_time}` if it is the latest")
        else:
            check.warnings.append(f"completed instant {name} is empty: read as a commit that wrote nothing "
                                  "(hudi-rs refuses such a file)")
    check.detail = f"{len(empty)} empty completed commit file(s)"


def check_change_data(o: Opened, check: Check) -> None:
    """Every change-data file a commit lists exists, is as long as the commit recorded, and holds CDC blocks of
    that commit only (commits older than what the newest clean kept lost theirs with their file slices)."""
    tl, storage = o.timeline, o.table.storage
    retained = earliest_retained(o.timeline) or ""
    count = 0
    for inst in tl.commits():
        if inst.requested_time < retained:
            continue
        for stat in tl.commit_metadata(inst).write_stats():
            for rel in stat.cdc_paths():
                count += 1
                problem = _change_data_problem(storage, rel, inst.requested_time, stat.cdc_stats.get(rel))
                if problem:
                    check.errors.append(f"change-data file {rel} of commit {inst.requested_time} {problem}; restore "
                                        "it, or roll the commit back if it is the latest")
    check.detail = f"{count} change-data files checked"


def _change_data_problem(storage: Any, rel: str, instant: str, recorded: Any) -> str | None:
    try:
        data = storage.read_bytes(rel)
    except FileNotFoundError:
        return "is missing"
    if isinstance(recorded, int) and len(data) < recorded:
        return f"is shorter ({len(data)} bytes) than its commit recorded ({recorded})"
    for block in read_blocks(data, rel):
        if block.block_type != BlockType.CDC_DATA:
            return f"holds a {block.block_type.name} block at byte {block.offset}, not change data"
        if block.instant_time != instant:
            return f"holds a block of instant {block.instant_time}"
        try:
            decode_cdc_block(block, rel)
        except HudiDsError as exc:
            return f"cannot be decoded ({exc})"
    return None


# ---- orphans ------------------------------------------------------------------------------------------------

def check_orphans(o: Opened, view: FileSystemView, check: Check) -> None:
    """A data file is an orphan when no instant accounts for it: its instant (base file) or its blocks'
    instants (log file) are on no completed or pending instant, and no pending instant's marker announces it;
    or a completed commit on the active timeline wrote it but does not list it (a failed attempt's leftover)."""
    tl, storage = o.timeline, o.table.storage
    known = {i.requested_time for i in tl.instants}
    earliest = min(known, default=None) if tl.has_archived_instants() else None
    completed = {i.requested_time for i in tl.commits()}
    announced: set[str] = set()
    for inst in tl.pending():
        announced.update(marked_files(storage, inst.requested_time))
    listed = view.committed_paths()

    def is_known(ts: str) -> bool:
        return ts in known or (earliest is not None and ts < earliest)

    misleading: list[str] = []
    files = data_files(storage, misleading)
    for rel in misleading:
        check.errors.append(f"stray file {rel}: a killed writer's staged copy of a log file, which other Hudi "
                            "readers take for a file group of its own (rows deleted since can come back); delete it, "
                            "or run `hudi-py clean`")
    for f in files:
        if f.path in listed or f.path in announced:
            continue
        if isinstance(f, BaseFile):
            problem = _base_problem(f, is_known, completed)
        else:
            problem = _log_problem(storage.read_bytes(f.path), f, is_known, completed, check)
        if problem:
            check.errors.append(f"orphan file {f.path}: {problem}; delete it (or roll back the write that left it)")
    check.detail = f"{len(files)} data files checked"


def _base_problem(f: BaseFile, is_known: Callable[[str], bool], completed: set[str]) -> str | None:
    if not is_known(f.instant):
        return f"its instant {f.instant} is not on the timeline and no pending write's marker announces it"
    if f.instant in completed:
        return f"commit {f.instant} does not list it"
    return None


def _log_problem(data: bytes, f: LogFile, is_known: Callable[[str], bool], completed: set[str],
                 check: Check) -> str | None:
    if not is_known(f.instant):
        return f"the instant {f.instant} in its name is not on the timeline"
    blocks = read_blocks(data, f.path)
    writers = set()
    for b in blocks:
        if b.block_type == BlockType.CORRUPT:
            check.warnings.append(f"{f.path}: corrupt block at offset {b.offset} (skipped by readers)")
        elif b.block_type != BlockType.COMMAND and b.instant_time:
            writers.add(b.instant_time)
    unknown = sorted(ts for ts in writers if not is_known(ts))
    if unknown:
        return f"its blocks were written by {', '.join(unknown)}, which are not on the timeline"
    unlisting = sorted(ts for ts in writers if ts in completed)
    if unlisting and all(ts in completed for ts in writers):
        return f"commit {', '.join(unlisting)} wrote its blocks but does not list it"
    return None


# ---- buckets ------------------------------------------------------------------------------------------------

def check_buckets(o: Opened, view: FileSystemView, check: Check) -> None:
    if not uses_bucket_index(o.config):
        check.skipped = True
        check.detail = "not a bucket-index table"
        return
    groups: dict[tuple[str, int], list[str]] = defaultdict(list)
    for partition, file_id in sorted(view.groups):
        bucket = bucket_of(o.config, file_id)
        if bucket is None:
            check.errors.append(f"file group {partition}/{file_id} has no bucket number in its file id")
            continue
        groups[(partition, bucket)].append(file_id)
        if o.config.num_buckets is not None and bucket >= o.config.num_buckets:
            check.errors.append(
                f"file group {partition}/{file_id} is bucket {bucket}, but the table has {o.config.num_buckets}")
    for (partition, bucket), ids in sorted(groups.items()):
        if len(ids) > 1:
            check.errors.append(
                f"partition {partition!r} bucket {bucket} has {len(ids)} live file groups ({', '.join(ids)}); "
                "a key may be read from the wrong one: roll back the commit that created the extra group")
    check.detail = f"{len(view.groups)} file groups in {len(groups)} buckets"


# ---- schemas ------------------------------------------------------------------------------------------------

def _readable_as(old: pa.DataType, new: pa.DataType) -> bool:
    """Whether values written as `old` read back as `new`: the same type, or a promotion Hudi's schema
    evolution allows (SchemaChangeUtils.isTypeUpdateAllow: int -> long/float/double/decimal/string,
    float -> double/decimal/string, decimal widening, date/decimal -> string, string -> date/decimal)."""
    if old.equals(new):
        return True
    t = pa.types

    def stringish(x: pa.DataType) -> bool:
        return bool(t.is_string(x) or t.is_large_string(x))

    if t.is_integer(old) and t.is_integer(new):
        return new.bit_width >= old.bit_width and (t.is_signed_integer(new) or not t.is_signed_integer(old))
    if (t.is_integer(old) or t.is_floating(old)) and (t.is_floating(new) or t.is_decimal(new)):
        return not (t.is_floating(old) and t.is_floating(new) and new.bit_width < old.bit_width)
    if stringish(new):
        return bool(stringish(old) or t.is_integer(old) or t.is_floating(old) or t.is_decimal(old)
                    or t.is_date(old) or t.is_boolean(old))
    if stringish(old):
        return bool(t.is_date(new) or t.is_decimal(new))
    if (t.is_binary(old) or t.is_large_binary(old)) and (t.is_binary(new) or t.is_large_binary(new)):
        return True
    if t.is_decimal(old) and t.is_decimal(new):
        return new.scale >= old.scale and new.precision - new.scale >= old.precision - old.scale
    if t.is_timestamp(old) and t.is_timestamp(new):
        return True
    if t.is_struct(old) and t.is_struct(new):
        fields = {new.field(i).name: new.field(i).type for i in range(new.num_fields)}
        return all(old.field(i).name not in fields or _readable_as(old.field(i).type, fields[old.field(i).name])
                   for i in range(old.num_fields))
    if (t.is_list(old) or t.is_large_list(old)) and (t.is_list(new) or t.is_large_list(new)):
        return _readable_as(old.value_type, new.value_type)
    return False


def _commit_schema(o: Opened, inst: Any) -> pa.Schema | None:
    extra = o.timeline.commit_metadata(inst).extra_metadata or {}
    if extra.get(ARROW_SCHEMA_KEY):
        try:
            return decode_arrow_schema(extra[ARROW_SCHEMA_KEY])
        except Exception:  # noqa: BLE001 - fall back to the Avro schema
            pass
    if extra.get("schema"):
        return strip_meta(avro_to_arrow(extra["schema"]))
    return None


def check_schemas(o: Opened, check: Check) -> None:
    latest = o.snap.data_schema()
    if latest is None:
        check.detail = "no schema yet (empty table)"
        return
    fields = {f.name: f for f in latest}
    seen = 0
    for inst in o.timeline.commits():
        try:
            schema = _commit_schema(o, inst)
        except HudiDsError as exc:
            check.errors.append(f"commit {inst.requested_time}: unreadable schema: {exc}")
            continue
        if schema is None:
            continue
        seen += 1
        for f in schema:
            if f.name not in fields:
                check.warnings.append(f"column {f.name!r} of commit {inst.requested_time} is not in the latest schema "
                                      "(its values are not read)")
            elif not _readable_as(f.type, fields[f.name].type):
                check.errors.append(
                    f"column {f.name!r} is {f.type} in commit {inst.requested_time} but {fields[f.name].type} in the "
                    "latest schema, which cannot read it; rewrite the column with a compatible type")
    check.detail = f"{seen} commit schemas checked against the latest ({len(latest)} columns)"


# ---- reads --------------------------------------------------------------------------------------------------

def check_read(o: Opened, check: Check) -> None:
    data = o.table.to_arrow()
    check.detail = f"{data.num_rows} rows"
    if data.num_rows and RECORD_KEY in data.column_names and o.config.populate_meta_fields:
        keyed = data.select([RECORD_KEY, PARTITION_PATH]).drop_null()
        groups = keyed.group_by([PARTITION_PATH, RECORD_KEY]).aggregate([([], "count_all")])
        dups = groups.filter(pc.greater(groups["count_all"], 1))
        if dups.num_rows:
            sample = ", ".join(f"{r[PARTITION_PATH]}/{r[RECORD_KEY]}" for r in dups.slice(0, 5).to_pylist())
            check.warnings.append(f"{dups.num_rows} record keys appear more than once in a partition: {sample}")


def check_pending(o: Opened, check: Check) -> None:
    pending = o.timeline.pending()
    for inst in pending:
        beat = "" if not o.table.storage.exists(heartbeat_path(inst.requested_time)) else ", has a heartbeat"
        check.warnings.append(
            f"pending {inst.action} {inst.requested_time} ({inst.state.value}{beat}): a running or failed write; "
            f"if its writer is gone, `hudi-py rollback PATH {inst.requested_time}` removes it")
    check.detail = f"{len(pending)} pending instants"


def _cleaning(o: Opened) -> dict[tuple[str, str], str]:
    """(partition, file name) -> the pending clean whose plan deletes it."""
    out = {}
    for inst in o.timeline.pending():
        if inst.action == "clean":
            plan = o.timeline.read_avro(inst, State.REQUESTED)
            for partition, infos in (plan.get("filePathsToBeDeletedPerPartition") or {}).items():
                out.update({(partition, (i.get("filePath") or "").rsplit("/", 1)[-1]): inst.requested_time
                            for i in infos or []})
    return out


def check_metadata_table(o: Opened, check: Check) -> None:
    """The files partition lists exactly the files committed instants wrote, at their sizes (what Hudi and
    hudi-rs read instead of listing). A file a pending clean deleted stays listed until that clean completes
    (the next clean finishes it): a warning."""
    mdt = metadata_table_of(o.table.storage)
    if mdt is None:
        check.skipped, check.detail = True, "no metadata table"
        return
    listed = read_listing(mdt, o.timeline)
    on_disk = committed_files(o.table.storage, o.timeline)
    cleaning = _cleaning(o)
    live = {p for p, _ in FileSystemView(o.table.storage, o.config, o.timeline,
                                          Visibility.of(o.timeline, None, o.config.layout_version)).groups}
    for partition in sorted(set(listed) | set(on_disk)):
        mine, disk = listed.get(partition, {}), on_disk.get(partition, {})
        if partition not in listed and disk and partition in live:  # else a delete_partition dropped it
            check.errors.append(f"partition {partition!r} is not in the metadata table's partition list")
            continue
        if partition not in listed:
            continue
        for name in sorted(set(mine) | set(disk)):
            if name not in mine:
                check.errors.append(f"{partition}/{name} is committed but the metadata table does not list it: "
                                    "Apache Hudi and hudi-rs do not read it")
            elif name not in disk and (partition, name) in cleaning:
                check.warnings.append(f"the metadata table lists {partition}/{name}, which the pending clean "
                                      f"{cleaning[partition, name]} deleted; the next clean completes it")
            elif name not in disk:
                check.errors.append(f"the metadata table lists {partition}/{name}, which is not a committed file")
            elif mine[name] != disk[name]:
                check.errors.append(f"the metadata table lists {partition}/{name} with {mine[name]} bytes; it has "
                                    f"{disk[name]}")
    if check.errors:
        check.errors.append(REBUILD)
    check.detail = f"{sum(len(f) for f in listed.values())} files in {len(listed)} partitions"


def check_metadata_timeline(o: Opened, check: Check) -> None:
    """Each data instant that changed files since the bootstrap has its completed deltacommit in the metadata
    table (hudi_ds.metadata.in_step)."""
    mdt = metadata_table_of(o.table.storage)
    if mdt is None:
        check.skipped, check.detail = True, "no metadata table"
        return
    found = timeline_differences(mdt, o.timeline)
    check.errors.extend(found.errors)
    check.warnings.extend(found.warnings)
    if found.errors:
        check.errors.append(REBUILD)
    check.detail = f"synced to {found.synced_to or 'its bootstrap'}"


def check_index_statistics(o: Opened, view: FileSystemView, check: Check) -> None:
    """column_stats and partition_stats agree with the live base files' footers
    (hudi_ds.metadata.stats_check)."""
    mdt = metadata_table_of(o.table.storage)
    if mdt is None or not {md.COLUMN_STATS, md.PARTITION_STATS} & set(o.config.metadata_partitions):
        check.skipped, check.detail = True, "no column_stats or partition_stats"
        return
    errors, warnings, checked = statistics_differences(o.table.storage, mdt, o.timeline, view,
                                                       committed_files(o.table.storage, o.timeline),
                                                       o.config.version)
    check.errors.extend(errors)
    check.warnings.extend(warnings)
    if errors:
        check.errors.append(REBUILD)
    check.detail = f"{checked} live base files checked"


def check_record_index(o: Opened, check: Check) -> None:
    """Every key the table holds maps to its file group in the metadata table's record index, which holds no
    other key (hudi_ds.metadata.record_index_check)."""
    if md.RECORD_INDEX not in listed_partitions(o.table.storage):
        check.skipped, check.detail = True, "no record index"
        return
    found = index_differences(o.table.storage, o.config, o.timeline)
    check.errors.extend(found.problems())
    if check.errors:
        check.errors.append("to rebuild the record index: hudi-py metadata drop PATH, then a write with "
                            "hoodie.metadata.record.index.enable=true (a RECORD_INDEX table's next write turns it "
                            "on by itself)")
    check.detail = f"{found.keys} keys"


def check_secondary_indexes(o: Opened, check: Check) -> None:
    """Each secondary index holds the key of every row of the snapshot (its indexed value and record key), in the
    file group the key hashes to, and no other key (hudi_ds.metadata.secondary_index_check)."""
    indexes = secondary_indexes(o.table.storage, listed_partitions(o.table.storage))
    if not indexes:
        check.skipped, check.detail = True, "no secondary index"
        return
    if not o.config.populate_meta_fields:
        check.skipped, check.detail = True, "the table does not store its record keys"
        return
    mdt = metadata_table_of(o.table.storage)
    if mdt is None:
        raise CorruptTableError("the table lists secondary indexes but no files partition of its metadata table")
    rows = query.snapshot(o.snap, columns=[RECORD_KEY, *{i.column for i in indexes}])
    counts = []
    for index in indexes:
        found = secondary_index_differences(mdt, o.timeline, index, rows, RECORD_KEY)
        check.errors.extend(found.problems())
        counts.append(f"{index.partition}: {found.keys} keys")
    if check.errors:
        check.errors.append("to rebuild a secondary index: drop it and create it again with Apache Hudi (DROP INDEX, "
                            "CREATE INDEX)")
    check.detail = "; ".join(counts)


def validate(path: str | HudiTable, on_check: Callable[[str, int, int], None] | None = None) -> dict[str, Any]:
    """Every check's findings; `on_check(name, done, total)` is told of each check as it starts."""
    try:
        o = open_table(path)
        view = o.view()
    except HudiDsError as exc:  # a timeline or properties file that cannot be read: the one finding
        opened = Check("table and timeline readable", errors=[f"{type(exc).__name__}: {exc}"])
        where = path.path if isinstance(path, HudiTable) else path
        return {"path": where, "ok": False, "checks": [opened.to_dict()], "errors": opened.errors, "warnings": []}
    steps: list[tuple[str, Callable[[Check], None]]] = [
        ("completed commits have metadata", lambda c: check_instant_files(o, c)),
        ("committed files exist", lambda c: check_committed(o, view, c)),
        ("change data of commits readable", lambda c: check_change_data(o, c)),
        ("no orphan data files", lambda c: check_orphans(o, view, c)),
        ("one file group per bucket", lambda c: check_buckets(o, view, c)),
        ("commit schemas readable with the latest", lambda c: check_schemas(o, c)),
        ("metadata table lists the committed files", lambda c: check_metadata_table(o, c)),
        ("metadata table in step with the timeline", lambda c: check_metadata_timeline(o, c)),
        ("column and partition statistics match the files", lambda c: check_index_statistics(o, view, c)),
        ("record index maps every key to its file group", lambda c: check_record_index(o, c)),
        ("secondary indexes hold every row's value", lambda c: check_secondary_indexes(o, c)),
        ("snapshot reads", lambda c: check_read(o, c)),
        ("pending instants", lambda c: check_pending(o, c)),
    ]
    checks = []
    for done, (name, fn) in enumerate(steps):
        if on_check is not None:
            on_check(name, done, len(steps))
        checks.append(_run(name, fn))
    errors = [e for c in checks for e in c.errors]
    warnings = [w for c in checks for w in c.warnings]
    return {"path": o.table.path, "ok": not errors, "checks": [c.to_dict() for c in checks], "errors": errors,
            "warnings": warnings}
