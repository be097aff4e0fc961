"""What the read-only commands report, as plain JSON-ready dicts; `render` only formats them."""

from __future__ import annotations

import posixpath
from collections.abc import Sequence
from dataclasses import dataclass, replace
from datetime import date, datetime, time, timedelta
from decimal import Decimal
from typing import Any

import pyarrow as pa

from hudi_ds.config import TableConfig
from hudi_ds.errors import ConfigError, HudiDsError
from hudi_ds.files.naming import BaseFile, LogFile, parse_base_file, parse_log_file
from hudi_ds.files.view import FileSlice, FileSystemView, Visibility
from hudi_ds.index.bucket import bucket_of_file_id
from hudi_ds.metadata.bootstrap import apply_metadata_setting
from hudi_ds.metadata.layout import MAINTAINED, METADATA_DIR, metadata_table_of
from hudi_ds.metadata.listing import files_slice, listing_of, merged_records
from hudi_ds.metadata.records import FILES
from hudi_ds.read.query import TableSnapshot
from hudi_ds.schema.meta import is_meta_column
from hudi_ds.storage import Storage
from hudi_ds.storage.local import misleads_hudi_readers
from hudi_ds.table import HudiTable
from hudi_ds.timeline import COMMIT_ACTIONS, Instant, Timeline

PARTITION_PREVIEW = 10


@dataclass
class Opened:
    """A table and one consistent look at it (config and timeline loaded once)."""

    table: HudiTable
    snap: TableSnapshot

    @property
    def config(self) -> TableConfig:
        return self.table.config

    @property
    def timeline(self) -> Timeline:
        return self.snap.timeline

    def view(self, partition: str | None = None) -> FileSystemView:
        """File groups of the latest snapshot (optionally of one partition)."""
        vis = Visibility.of(self.timeline, None, self.config.layout_version)
        return self.snap.view(vis, None if partition is None else (lambda p: p == partition))


def open_table(table: str | HudiTable) -> Opened:
    """The table (a path, or a HudiTable opened with options) and its current snapshot, its files as storage
    holds them (validate compares them with the timeline and with the metadata table)."""
    opened = table if isinstance(table, HudiTable) else HudiTable(table)
    return Opened(opened, replace(opened.snapshot(), metadata_listing=False))


def uses_bucket_index(config: TableConfig) -> bool:
    return (config.index_type or "").upper() == "BUCKET" or config.num_buckets is not None


def bucket_of(config: TableConfig, file_id: str) -> int | None:
    return bucket_of_file_id(file_id) if uses_bucket_index(config) else None


def instant_dict(inst: Instant | None) -> dict[str, Any] | None:
    if inst is None:
        return None
    return {"requested_time": inst.requested_time, "action": inst.action, "state": inst.state.value,
            "completion_time": inst.completion_time}


def data_files(storage: Storage, misleading: list[str] | None = None) -> list[BaseFile | LogFile]:
    """Every base and log file under the table folder (outside .hoodie), with its size; `misleading` collects
    staged copies a killed writer left under names other Hudi readers take for log files (before 2026-11-26,
    hudi_ds staged a file as ".<name>.<uuid>.tmp")."""
    out: list[BaseFile | LogFile] = []
    for entry in storage.walk_files(""):
        if entry.path.startswith(".hoodie/") or "/.hoodie/" in entry.path:
            continue
        partition, _, name = entry.path.rpartition("/")
        f: BaseFile | LogFile | None = parse_base_file(partition, name, entry.size)
        if f is None:
            f = parse_log_file(partition, name, entry.size)
        if f is not None:
            out.append(f)
        elif misleading is not None and misleads_hudi_readers(name):
            misleading.append(entry.path)
    return out


# ---- info ---------------------------------------------------------------------------------------------------

def config_dict(c: TableConfig) -> dict[str, Any]:
    return {
        "name": c.name, "table_type": c.table_type, "version": c.version, "layout_version": c.layout_version,
        "record_key_fields": list(c.record_key_fields), "ordering_field": c.ordering_field,
        "partition_fields": list(c.partition_fields), "num_buckets": c.num_buckets, "index_type": c.index_type,
        "key_generator": c.key_generator, "hive_style": c.hive_style, "url_encode": c.url_encode,
        "populate_meta_fields": c.populate_meta_fields, "base_file_format": c.base_file_format,
        "database": c.database, "timezone": c.timezone, "metadata_partitions": list(c.metadata_partitions),
        "change_data": c.cdc_mode if c.cdc_enabled else None,
    }


def schema_rows(schema: pa.Schema) -> list[dict[str, Any]]:
    return [{"name": f.name, "type": str(f.type), "nullable": f.nullable} for f in schema]


def info(path: str | HudiTable) -> dict[str, Any]:
    o = open_table(path)
    tl = o.timeline
    schema = o.snap.data_schema()
    view = o.view()
    slices = view.latest_slices()
    partitions = sorted({s.partition for s in slices})
    on_disk = data_files(o.table.storage)
    return {
        "path": o.table.path,
        "config": config_dict(o.config),
        "schema": schema_rows(schema if schema is not None else pa.schema([])),
        "size": {
            "files": len(on_disk), "bytes": sum(f.size for f in on_disk),
            "live_files": sum(len(s.files) for s in slices), "live_bytes": sum(s.size for s in slices),
        },
        "file_groups": len(view.groups),
        "partitions": {"count": len(partitions), "first": partitions[:PARTITION_PREVIEW]},
        "timeline": {
            "instants": len(tl.instants), "commits": len(tl.commits()), "pending": len(tl.pending()),
            "archived_instants": tl.has_archived_instants(),
        },
        "latest_commit": instant_dict(tl.last_completed_commit()),
    }


# ---- timeline -----------------------------------------------------------------------------------------------

def _instant_row(tl: Timeline, inst: Instant) -> dict[str, Any]:
    row: dict[str, Any] = instant_dict(inst) or {}
    if not inst.is_completed:
        return row
    try:
        if inst.action in COMMIT_ACTIONS:
            meta = tl.commit_metadata(inst)
            stats = meta.write_stats()
            row.update(
                operation=meta.operation_type,
                files=len(stats),
                rows_written=sum(s.num_writes for s in stats),
                rows_inserted=sum(s.num_inserts for s in stats),
                rows_updated=sum(s.num_update_writes for s in stats),
                rows_deleted=sum(s.num_deletes for s in stats),
                bytes_written=sum(s.total_write_bytes for s in stats),
            )
            if meta.partition_to_replace_file_ids:
                row["replaced_file_groups"] = sum(len(v) for v in meta.partition_to_replace_file_ids.values())
        elif inst.action == "rollback":
            rec = tl.read_avro(inst)
            row["rolled_back"] = list(rec.get("commitsRollback") or [])
            row["files_deleted"] = rec.get("totalFilesDeleted")
        elif inst.action == "clean":
            rec = tl.read_avro(inst)
            row["files_deleted"] = rec.get("totalFilesDeleted")
    except HudiDsError as exc:
        row["error"] = str(exc)
    return row


def timeline(path: str | HudiTable, include_all: bool) -> dict[str, Any]:
    """Commit-like instants (completed and pending); with include_all also clean, rollback, indexing..."""
    o = open_table(path)
    tl = o.timeline
    rows = [_instant_row(tl, i) for i in tl.instants if include_all or i.is_commit_like]
    return {
        "path": o.table.path,
        "all": include_all,
        "instants": rows,
        "hidden": 0 if include_all else sum(1 for i in tl.instants if not i.is_commit_like),
        "archived_instants": tl.has_archived_instants(),
    }


# the columns of a timeline row (absent keys are null: pending instants, non-commit actions)
TIMELINE_SCHEMA = pa.schema([
    ("requested_time", pa.string()), ("completion_time", pa.string()), ("action", pa.string()),
    ("state", pa.string()), ("operation", pa.string()), ("files", pa.int64()), ("rows_written", pa.int64()),
    ("rows_inserted", pa.int64()), ("rows_updated", pa.int64()), ("rows_deleted", pa.int64()),
    ("bytes_written", pa.int64()), ("replaced_file_groups", pa.int64()), ("rolled_back", pa.list_(pa.string())),
    ("files_deleted", pa.int64()), ("error", pa.string()),
])


def timeline_table(rows: list[dict[str, Any]]) -> pa.Table:
    """Timeline rows as an Arrow table (HudiTable.history())."""
    return pa.Table.from_pylist(rows, schema=TIMELINE_SCHEMA)


# ---- files --------------------------------------------------------------------------------------------------

def _group_row(config: TableConfig, slices: list[FileSlice]) -> dict[str, Any]:
    sl = slices[-1]
    return {
        "partition": sl.partition,
        "file_id": sl.file_id,
        "bucket": bucket_of(config, sl.file_id),
        "slices": len(slices),
        "base_instant": sl.base_instant,
        "base_file": sl.base_file.name if sl.base_file else None,
        "base_bytes": sl.base_file.size if sl.base_file else 0,
        "log_files": len(sl.log_files),
        "log_bytes": sum(lf.size for lf in sl.log_files),
        "log_file_names": [lf.name for lf in sl.log_files],
    }


def files(path: str | HudiTable, partition: str | None) -> dict[str, Any]:
    o = open_table(path)
    if partition is not None:
        partition = partition.strip("/")
        everything = o.view()
        if partition not in everything.partitions:
            known = ", ".join(repr(p) for p in everything.partitions[:PARTITION_PREVIEW]) or "none"
            raise ConfigError(
                f"partition {partition!r} is not in the table; partitions are {known} "
                "(run `hudi-py info` to list them)"
            )
    view = o.view(partition)
    groups = [_group_row(o.config, slices) for _, slices in sorted(view.groups.items())]
    return {
        "path": o.table.path,
        "partition": partition,
        "file_groups": groups,
        "summary": {
            "file_groups": len(groups),
            "base_files": sum(1 for g in groups if g["base_file"]),
            "log_files": sum(g["log_files"] for g in groups),
            "bytes": sum(g["base_bytes"] + g["log_bytes"] for g in groups),
        },
    }


# ---- show ---------------------------------------------------------------------------------------------------

def jsonable(value: Any) -> Any:
    """Arrow's Python values as JSON values (decimals and times as strings, bytes as hex)."""
    if isinstance(value, dict):
        return {str(k): jsonable(v) for k, v in value.items()}
    if isinstance(value, (list, tuple)):
        return [jsonable(v) for v in value]
    if isinstance(value, (datetime, date, time)):
        return value.isoformat()
    if isinstance(value, (Decimal, timedelta)):
        return str(value)
    if isinstance(value, (bytes, bytearray, memoryview)):
        return bytes(value).hex()
    return value


def show(path: str | HudiTable, as_of: str | None, filters: Sequence[tuple[str, str, Any]], columns: Sequence[str] | None,
         limit: int, read_optimized: bool, meta: bool) -> dict[str, Any]:
    table = open_table(path).table
    data = table.to_arrow(as_of=as_of, filters=list(filters) or None, columns=columns,
                          read_optimized=read_optimized)
    if columns is None and not meta:
        data = data.select([n for n in data.column_names if not is_meta_column(n)])
    shown = data.slice(0, limit) if limit > 0 else data
    return {
        "path": table.path,
        "as_of": as_of,
        "read_optimized": read_optimized,
        "filters": [list(f) for f in filters],
        "columns": data.column_names,
        "num_rows": data.num_rows,
        "limit": limit,
        "truncated": shown.num_rows < data.num_rows,
        "rows": jsonable(shown.to_pylist()),
    }


def drop_metadata(table: HudiTable) -> dict[str, Any]:
    """Drop the table's metadata table under the commit lock (the property first, then the folder), as Apache
    Hudi's writers do under hoodie.metadata.enable=false: the repair of a damaged one (the next write builds
    it again on a version 8/9 table) and the way out for one holding indexes hudi_ds does not maintain."""
    had = bool(table.config.metadata_partitions) or table.storage.is_dir(METADATA_DIR)
    apply_metadata_setting(table.storage, table.config, False)
    message = "dropped the metadata table" if had else "the table has no metadata table"
    return {"command": "metadata drop", "path": table.path, "result": {"dropped": had}, "message": message}


def metadata(path: str | HudiTable) -> dict[str, Any]:
    """The table's metadata table: its partitions (and which hudi_ds maintains), what its files partition lists
    and the data instant it is synced to."""
    table = path if isinstance(path, HudiTable) else HudiTable(path)
    partitions = table.config.metadata_partitions
    out: dict[str, Any] = {"command": "metadata", "path": table.path}
    mdt = metadata_table_of(table.storage)
    if mdt is None:
        others = f" (its partitions {', '.join(partitions)} include no files partition)" if partitions else ""
        out.update(message=f"the table has no metadata table in use{others}; a write to a version "
                           "8/9 table creates one (hoodie.metadata.enable defaults to true there)", result={})
        return out
    data_timeline = table.load_timeline()
    mdt_timeline = mdt.timeline()
    sl = files_slice(mdt, mdt_timeline, data_timeline)
    listing = listing_of(merged_records(mdt, sl), mdt.storage.full(FILES))
    out.update(message=f"metadata table of {table.path}", result={
        "partitions": partitions,
        "maintained by hudi_ds": [p for p in partitions if p in MAINTAINED],
        "version": mdt.version,
        "data partitions listed": len(listing),
        "files listed": sum(len(f) for f in listing.values()),
        "bytes listed": sum(size for f in listing.values() for size in f.values()),
        "base file": posixpath.basename(sl.base) if sl.base else None,
        "delta commits since": len(sl.logs),
        "synced to": sl.logs[-1][1] if sl.logs else sl.base_instant,
        "pending instants": [i.requested_time for i in mdt_timeline.pending()],
    })
    return out
