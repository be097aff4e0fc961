"""HoodieCommitMetadata: the content of completed commit/deltacommit/replacecommit instants (spec §2.4).

v6 tables keep it as pretty-printed Jackson JSON; v8/v9 as Avro (HoodieCommitMetadata or
HoodieReplaceCommitMetadata). `to_json_bytes` reproduces Java's output byte for byte (key order, Jackson's
pretty printer, `"prevCommit" : "null"`, log-file stats that carry logVersion/logOffset/baseFile/logFiles/
recordsStats and base-file stats that don't), because Java's incremental queries, the archiver and hudi-rs all
parse these files.
"""

from __future__ import annotations

import json
import posixpath
from dataclasses import dataclass, field
from typing import Any

from hudi_ds.errors import CorruptTableError
from hudi_ds.storage import require_inside
from hudi_ds.timeline.avro_schemas import COMMIT_METADATA

# (json key, attribute) in the order Jackson writes a HoodieWriteStat; delta stats append _LOG_FIELDS.
_BASE_FIELDS: tuple[tuple[str, str], ...] = (
    ("fileId", "file_id"), ("path", "path"), ("cdcStats", "cdc_stats"), ("prevCommit", "prev_commit"),
    ("numWrites", "num_writes"), ("numDeletes", "num_deletes"), ("numUpdateWrites", "num_update_writes"),
    ("numInserts", "num_inserts"), ("totalWriteBytes", "total_write_bytes"),
    ("totalWriteErrors", "total_write_errors"), ("tempPath", "temp_path"),
    ("partitionPath", "partition_path"),
    ("totalLogRecords", "total_log_records"), ("totalLogFilesCompacted", "total_log_files_compacted"),
    ("totalLogSizeCompacted", "total_log_size_compacted"),
    ("totalUpdatedRecordsCompacted", "total_updated_records_compacted"),
    ("totalLogBlocks", "total_log_blocks"),
    ("totalCorruptLogBlock", "total_corrupt_log_block"), ("totalRollbackBlocks", "total_rollback_blocks"),
    ("fileSizeInBytes", "file_size_in_bytes"), ("minEventTime", "min_event_time"),
    ("maxEventTime", "max_event_time"), ("runtimeStats", "runtime_stats"),
)
_LOG_FIELDS: tuple[tuple[str, str], ...] = (
    ("logVersion", "log_version"), ("logOffset", "log_offset"), ("baseFile", "base_file"),
    ("logFiles", "log_files"), ("recordsStats", "records_stats"),
)
_INT_ATTRS = frozenset({
    "num_writes", "num_deletes", "num_update_writes", "num_inserts", "total_write_bytes",
    "total_write_errors", "total_log_records", "total_log_files_compacted", "total_log_size_compacted",
    "total_updated_records_compacted", "total_log_blocks", "total_corrupt_log_block",
    "total_rollback_blocks", "file_size_in_bytes", "log_offset",
})

# HoodieWriteStat fields of the Avro commit metadata, in schema order
_AVRO_STAT_FIELDS = [f["name"] for f in COMMIT_METADATA["fields"][0]["type"][1]["values"]["items"]["fields"]]


@dataclass
class WriteStat:
    """Stats of one file written by an instant (HoodieWriteStat / HoodieDeltaWriteStat)."""

    file_id: str = ""
    path: str | None = None  # relative to the table base path
    prev_commit: str = "null"  # Java writes the string "null" for a new file group
    num_writes: int = 0
    num_deletes: int = 0
    num_update_writes: int = 0
    num_inserts: int = 0
    total_write_bytes: int = 0
    total_write_errors: int = 0
    partition_path: str | None = None
    total_log_records: int = 0
    total_log_blocks: int = 0
    total_corrupt_log_block: int = 0
    total_rollback_blocks: int = 0
    file_size_in_bytes: int = 0
    min_event_time: int | None = None
    max_event_time: int | None = None
    log_version: int | None = None
    log_offset: int = 0
    base_file: str | None = None  # base file name of the slice a log was appended to ("" for log-only slices)
    log_files: list[str] = field(default_factory=list)
    total_log_files_compacted: int = 0
    total_log_size_compacted: int = 0
    total_updated_records_compacted: int = 0
    is_log: bool = False  # a HoodieDeltaWriteStat (log file): adds logVersion/logOffset/baseFile/logFiles
    runtime_stats: dict[str, int] | None = None
    cdc_stats: Any = None
    temp_path: str | None = None
    records_stats: Any = field(default_factory=lambda: {"val": None})
    prev_base_file: str | None = None  # v8 Avro only; not written to v6 JSON
    # a base file's column ranges as its write task reported them (hudi_ds.metadata.column_ranges): like Hudi's
    # transient recordsStats, never written into the commit metadata
    column_ranges: Any = field(default=None, compare=False, repr=False)

    def to_json_dict(self) -> dict[str, Any]:
        """The Jackson-shaped dict (key order and key set as Java 0.14/0.15 write)."""
        keys = _BASE_FIELDS + _LOG_FIELDS if self.is_log else _BASE_FIELDS
        return {k: getattr(self, a) for k, a in keys}

    @classmethod
    def from_dict(cls, d: dict[str, Any]) -> WriteStat:
        """From v6 JSON or a v8 Avro HoodieWriteStat record; nulls become the Java defaults."""
        stat = cls()
        for key, attr in _BASE_FIELDS + _LOG_FIELDS:
            if key not in d:
                continue
            value = d[key]
            if value is None and attr in _INT_ATTRS:
                value = 0
            if attr == "log_files":
                value = list(value or [])
            setattr(stat, attr, value)
        if "prevCommit" in d and d["prevCommit"] is None:
            stat.prev_commit = "null"
        stat.prev_base_file = d.get("prevBaseFile")
        # JSON: delta stats have the key; Avro: every stat has it, log stats have a value.
        stat.is_log = d.get("logVersion") is not None or bool(d.get("logFiles")) or (
            "logVersion" in d and "totalLogFiles" not in d)
        return stat

    def all_paths(self) -> list[str]:
        """Every file this stat names: `path` plus the other log files (relative to the table base path)."""
        out = [self.path] if self.path else []
        folder = posixpath.dirname(self.path) if self.path else (self.partition_path or "")
        for name in self.log_files:
            rel = posixpath.join(folder, name) if folder else name
            if rel not in out:
                out.append(rel)
        return out

    def cdc_paths(self) -> list[str]:
        """The change-data files this stat lists (`cdcStats`: relative path -> size)."""
        return sorted(self.cdc_stats) if isinstance(self.cdc_stats, dict) else []


@dataclass
class CommitMetadata:
    """Content of a completed commit-like instant."""

    partition_to_write_stats: dict[str, list[WriteStat]] = field(default_factory=dict)
    compacted: bool = False
    extra_metadata: dict[str, str] = field(default_factory=dict)
    operation_type: str = "UNKNOWN"
    # None: not a replacecommit (key omitted from JSON); a dict (even empty): a replacecommit
    partition_to_replace_file_ids: dict[str, list[str]] | None = None

    @property
    def schema_json(self) -> str | None:
        """The writer schema (Avro JSON, no meta fields) Java and hudi-rs resolve the table schema from."""
        return self.extra_metadata.get("schema") or None

    def require_paths_inside(self, source: str) -> None:
        """CorruptTableError (naming `source`) if a partition or file this metadata names lies outside the table:
        rollback and clean delete what commit metadata lists."""
        for partition, stats in self.partition_to_write_stats.items():
            require_inside(partition, source)
            for stat in stats:
                require_inside(stat.partition_path or "", source)
                for rel in stat.all_paths() + stat.cdc_paths():
                    require_inside(rel, source)
        for partition in self.partition_to_replace_file_ids or {}:
            require_inside(partition, source)

    def write_stats(self) -> list[WriteStat]:
        return [s for stats in self.partition_to_write_stats.values() for s in stats]

    def written_files(self) -> list[tuple[str, str, str]]:
        """(partition path, file id, relative path) of every file the instant wrote."""
        out: list[tuple[str, str, str]] = []
        for partition, stats in self.partition_to_write_stats.items():
            for s in stats:
                out.extend((partition, s.file_id, p) for p in s.all_paths())
        return out

    def replaced_file_ids(self) -> dict[str, list[str]]:
        return dict(self.partition_to_replace_file_ids or {})

    # --- JSON (v6) ------------------------------------------------------------------------------------------

    def to_json_dict(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "partitionToWriteStats": {p: [s.to_json_dict() for s in stats]
                                      for p, stats in self.partition_to_write_stats.items()},
            "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata),
            "operationType": self.operation_type,
        }
        if self.partition_to_replace_file_ids is not None:
            out["partitionToReplaceFileIds"] = {
                p: list(ids) for p, ids in self.partition_to_replace_file_ids.items()}
        return out

    def to_json_bytes(self) -> bytes:
        """UTF-8 JSON exactly as Jackson's default pretty printer writes it (no trailing newline)."""
        return jackson_pretty(self.to_json_dict()).encode("utf-8")

    @classmethod
    def from_json_bytes(cls, data: bytes, path: str) -> CommitMetadata:
        """Parse v6 JSON; 0 bytes is empty metadata; malformed raises CorruptTableError naming `path`."""
        if not data.strip():
            return cls()
        try:
            doc = json.loads(data.decode("utf-8"))
        except (UnicodeDecodeError, ValueError) as e:
            raise CorruptTableError(f"commit metadata {path} is not valid JSON: {e}") from e
        try:
            return cls.from_dict(doc)
        except (TypeError, ValueError, AttributeError) as e:
            raise CorruptTableError(f"commit metadata {path} has an unexpected shape: {e}") from e

    # --- Avro (v8/v9, and the archived timeline of every version) -------------------------------------------

    def to_avro_record(self, replace: bool) -> dict[str, Any]:
        """This metadata as the Avro HoodieCommitMetadata (or HoodieReplaceCommitMetadata) record."""
        stats: dict[str, list[dict[str, Any]]] = {}
        for partition, items in self.partition_to_write_stats.items():
            rows = []
            for stat in items:
                raw = stat.to_json_dict()
                row = {name: raw.get(name) for name in _AVRO_STAT_FIELDS}
                row["cdcStats"] = row["cdcStats"] if isinstance(row["cdcStats"], dict) else None
                row["logVersion"] = int(row["logVersion"]) if row["logVersion"] is not None else None
                row["prevBaseFile"] = stat.prev_base_file
                rows.append(row)
            stats[partition] = rows
        out: dict[str, Any] = {
            "partitionToWriteStats": stats, "compacted": self.compacted,
            "extraMetadata": dict(self.extra_metadata), "version": 1, "operationType": self.operation_type,
        }
        if replace:
            out["partitionToReplaceFileIds"] = {p: list(ids) for p, ids in self.replaced_file_ids().items()}
        return out

    @classmethod
    def from_avro_record(cls, rec: dict[str, Any]) -> CommitMetadata:
        """From a v8/v9 HoodieCommitMetadata or HoodieReplaceCommitMetadata Avro record."""
        return cls.from_dict(rec)

    @classmethod
    def from_dict(cls, doc: Any) -> CommitMetadata:
        if not isinstance(doc, dict):
            raise TypeError(f"expected a JSON object, got {type(doc).__name__}")
        stats: dict[str, list[WriteStat]] = {}
        for partition, items in (doc.get("partitionToWriteStats") or {}).items():
            stats[partition] = [WriteStat.from_dict(s) for s in (items or []) if s is not None]
        replace = doc.get("partitionToReplaceFileIds")
        if "partitionToReplaceFileIds" in doc:
            replace = {p: list(ids or []) for p, ids in (replace or {}).items()}
        extra = doc.get("extraMetadata") or {}
        if not isinstance(extra, dict):
            raise TypeError("extraMetadata is not an object")
        return cls(
            partition_to_write_stats=stats,
            compacted=bool(doc.get("compacted") or False),
            extra_metadata={str(k): v for k, v in extra.items()},
            operation_type=doc.get("operationType") or "UNKNOWN",
            partition_to_replace_file_ids=replace,
        )


def jackson_pretty(value: Any, indent: int = 0) -> str:
    """JSON as Jackson's DefaultPrettyPrinter: `"k" : v`, 2-space objects, one-line arrays, `{ }`/`[ ]`."""
    if isinstance(value, dict):
        if not value:
            return "{ }"
        pad = " " * (indent + 2)
        items = ",\n".join(f"{pad}{_scalar(str(k))} : {jackson_pretty(v, indent + 2)}"
                           for k, v in value.items())
        return "{\n" + items + "\n" + " " * indent + "}"
    if isinstance(value, (list, tuple)):
        if not value:
            return "[ ]"
        return "[ " + ", ".join(jackson_pretty(v, indent) for v in value) + " ]"
    return _scalar(value)


# one encoder for every scalar: json.dumps with a non-default argument builds a new encoder per call, and a
# commit's metadata has about ten scalars per written file (a micro-batch's commit spent 15 ms building them)
_SCALAR_ENCODER = json.JSONEncoder(ensure_ascii=False)


def _scalar(value: Any) -> str:
    return _SCALAR_ENCODER.encode(value)
