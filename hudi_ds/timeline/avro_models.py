"""Avro instant files: encode/decode the one-record container files Java's timeline writes, plus builders.

Java (`TimelineMetadataUtils.serializeAvroMetadata`) writes an Avro object container file with the null
codec, only the `avro.schema` metadata key (no `avro.codec`), one block holding one record. The embedded
schema is the compiled class's schema: Java's key order and an `avro.java.string` mark on every string and
map. We write the same bytes (only the random sync marker differs), so Java and hudi-rs read our plans and
metadata as their own. fastavro is imported by the functions that use it: version 6 tables keep their commit
metadata as JSON, and `import hudi_ds` does not pay for it (issue 32).
"""

from __future__ import annotations

import io
import json
import os
from collections.abc import Iterable, Mapping
from typing import Any

from hudi_ds.errors import CorruptTableError
from hudi_ds.schema.avro_binary import avro_bytes, zigzag
from hudi_ds.timeline.avro_schemas import (
    ALL_SCHEMAS,
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMMIT_METADATA,
    COMPACTION_PLAN,
    REPLACE_COMMIT_METADATA,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
    ROLLBACK_PLAN,
    Schema,
)

__all__ = [
    "ALL_SCHEMAS", "CLEAN_METADATA", "CLEANER_PLAN", "COMMIT_METADATA", "COMPACTION_PLAN",
    "REPLACE_COMMIT_METADATA", "REQUESTED_REPLACE_METADATA", "ROLLBACK_METADATA", "ROLLBACK_PLAN",
    "AVRO_MAGIC", "encode_avro_instant", "decode_avro_instant", "java_schema_json",
    "instant_info", "rollback_request", "rollback_plan", "rollback_partition_metadata", "rollback_metadata",
    "compaction_operation", "compaction_plan", "clean_file_info", "clean_plan", "clean_partition_metadata",
    "clean_metadata", "requested_replace_metadata",
    "LATEST_COMPACTION_PLAN_VERSION", "LATEST_CLEAN_PLAN_VERSION", "LATEST_CLEAN_METADATA_VERSION",
]

AVRO_MAGIC = b"Obj\x01"
LATEST_COMPACTION_PLAN_VERSION = 2  # file names (not paths) in deltaFilePaths / dataFilePath
LATEST_CLEAN_PLAN_VERSION = 2  # filePathsToBeDeletedPerPartition holds full paths
LATEST_CLEAN_METADATA_VERSION = 2  # success/failed delete files are file names
_PRIMITIVES = frozenset({"null", "boolean", "int", "long", "float", "double", "bytes", "string"})
_JAVA_STRING = {"avro.java.string": "String"}


# --- schema JSON as Java prints it --------------------------------------------------------------------------

def java_schema_json(schema: Schema) -> str:
    """The schema text Java embeds for this schema: compact JSON, Java key order, `avro.java.string` marks."""
    return json.dumps(_java(schema, ""), separators=(",", ":"), ensure_ascii=False)


def _java(s: Any, ns: str) -> Any:
    if isinstance(s, str):
        return {"type": "string", **_JAVA_STRING} if s == "string" else s
    if isinstance(s, list):
        return [_java(x, ns) for x in s]
    t = s["type"]
    if t == "record":
        out: dict[str, Any] = {"type": "record", "name": s["name"]}
        own_ns = s.get("namespace", ns)
        if own_ns != ns:
            out["namespace"] = own_ns
        if "doc" in s:
            out["doc"] = s["doc"]
        out["fields"] = [_java_field(f, own_ns) for f in s["fields"]]
        return out
    props = {k: v for k, v in s.items() if k not in ("type", "items", "values", "name", "namespace")}
    if t == "array":
        return {"type": "array", "items": _java(s["items"], ns), **props}
    if t == "map":
        return {"type": "map", "values": _java(s["values"], ns), **_JAVA_STRING, **props}
    if t in _PRIMITIVES:
        if t == "string":
            return {"type": "string", **_JAVA_STRING, **props}
        return {"type": t, **props} if props else t
    return _java(t, ns)


def _java_field(f: dict[str, Any], ns: str) -> dict[str, Any]:
    out: dict[str, Any] = {"name": f["name"], "type": _java(f["type"], ns)}
    for key in ("doc", "default"):
        if key in f:
            out[key] = f[key]
    return out


# --- object container file ----------------------------------------------------------------------------------

# id(schema) -> (schema, fastavro's parsed form, Java's schema text): the schemas are module constants, parsed
# once per process rather than at every instant file (a few milliseconds each)
_PARSED: dict[int, tuple[Schema, Any, str]] = {}


def _parsed(schema: Schema) -> tuple[Any, str]:
    hit = _PARSED.get(id(schema))
    if hit is None or hit[0] is not schema:
        import fastavro

        hit = _PARSED[id(schema)] = (schema, fastavro.parse_schema(schema, named_schemas={}),
                                     java_schema_json(schema))
    return hit[1], hit[2]


def encode_avro_instant(record: Mapping[str, Any], schema: Schema, sync_marker: bytes | None = None) -> bytes:
    """One-record Avro object container file, byte-compatible with Java's serializeAvroMetadata."""
    import fastavro

    parsed, java_text = _parsed(schema)
    body = io.BytesIO()
    fastavro.schemaless_writer(body, parsed, dict(record))
    data = body.getvalue()
    sync = sync_marker if sync_marker is not None else os.urandom(16)
    if len(sync) != 16:
        raise ValueError("an Avro sync marker has 16 bytes")
    header = (AVRO_MAGIC + zigzag(1) + avro_bytes(b"avro.schema")
              + avro_bytes(java_text.encode("utf-8")) + zigzag(0) + sync)
    return header + zigzag(1) + avro_bytes(data) + sync


def decode_avro_instant(data: bytes, path: str, reader_schema: Schema | None = None) -> dict[str, Any]:
    """The single record of an Avro instant file; CorruptTableError naming `path` on anything unreadable."""
    if not data:
        raise CorruptTableError(f"timeline file {path} is empty; expected an Avro object container file")
    if not data.startswith(AVRO_MAGIC):
        raise CorruptTableError(f"timeline file {path} is not an Avro object container file (bad magic)")
    import fastavro

    try:
        parsed = _parsed(reader_schema)[0] if reader_schema else None
        reader = fastavro.reader(io.BytesIO(data), reader_schema=parsed)
        record = next(iter(reader), None)
    except Exception as e:  # fastavro raises many types on truncated or garbled input
        raise CorruptTableError(f"timeline file {path} is not readable Avro: {type(e).__name__}: {e}") from e
    if not isinstance(record, dict):
        raise CorruptTableError(f"timeline file {path} holds no Avro record")
    return record


# --- builders for what hudi_ds writes -----------------------------------------------------------------------

def instant_info(commit_time: str, action: str) -> dict[str, Any]:
    return {"commitTime": commit_time, "action": action}


def rollback_request(partition_path: str, file_id: str | None = None, latest_base_instant: str | None = None,
                     files_to_be_deleted: Iterable[str] = (),
                     log_blocks_to_be_deleted: Mapping[str, int] | None = None) -> dict[str, Any]:
    """One HoodieRollbackRequest: files (full paths, as Java writes) to delete, log files to mask."""
    return {
        "partitionPath": partition_path, "fileId": file_id, "latestBaseInstant": latest_base_instant,
        "filesToBeDeleted": list(files_to_be_deleted),
        "logBlocksToBeDeleted": (dict(log_blocks_to_be_deleted)
                                 if log_blocks_to_be_deleted is not None else None),
    }


def rollback_plan(instant_to_rollback: str, action: str, requests: Iterable[Mapping[str, Any]],
                  version: int = 1) -> dict[str, Any]:
    """HoodieRollbackPlan for `<R>.rollback.requested`."""
    return {"instantToRollback": instant_info(instant_to_rollback, action),
            "RollbackRequests": [dict(r) for r in requests], "version": version}


def rollback_partition_metadata(partition_path: str, success_delete_files: Iterable[str] = (),
                                failed_delete_files: Iterable[str] = (),
                                rollback_log_files: Mapping[str, int] | None = None,
                                log_files_from_failed_commit: Mapping[str, int] | None = None,
                                ) -> dict[str, Any]:
    return {
        "partitionPath": partition_path, "successDeleteFiles": list(success_delete_files),
        "failedDeleteFiles": list(failed_delete_files),
        "rollbackLogFiles": dict(rollback_log_files) if rollback_log_files is not None else None,
        "logFilesFromFailedCommit": (dict(log_files_from_failed_commit)
                                     if log_files_from_failed_commit is not None else None),
    }


def rollback_metadata(start_rollback_time: str, rolled_back: Iterable[tuple[str, str]],
                      partition_metadata: Mapping[str, Mapping[str, Any]], time_taken_ms: int = -1,
                      version: int = 1) -> dict[str, Any]:
    """HoodieRollbackMetadata for `<R>.rollback`; `rolled_back` = (instant time, action) pairs."""
    instants = list(rolled_back)
    parts = {p: dict(m) for p, m in partition_metadata.items()}
    return {
        "startRollbackTime": start_rollback_time, "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in parts.values()),
        "commitsRollback": [ts for ts, _ in instants], "partitionMetadata": parts, "version": version,
        "instantsRollback": [instant_info(ts, a) for ts, a in instants],
    }


def compaction_operation(base_instant_time: str, file_id: str, partition_path: str,
                         data_file_path: str | None, delta_file_paths: Iterable[str],
                         metrics: Mapping[str, float] | None = None) -> dict[str, Any]:
    """One HoodieCompactionOperation; paths are file names (plan version 2)."""
    return {
        "baseInstantTime": base_instant_time, "deltaFilePaths": list(delta_file_paths),
        "dataFilePath": data_file_path, "fileId": file_id, "partitionPath": partition_path,
        "metrics": {k: float(v) for k, v in metrics.items()} if metrics is not None else None,
        "bootstrapFilePath": None,
    }


def compaction_plan(operations: Iterable[Mapping[str, Any]], extra_metadata: Mapping[str, str] | None = None,
                    version: int = LATEST_COMPACTION_PLAN_VERSION) -> dict[str, Any]:
    """HoodieCompactionPlan for `<C>.compaction.requested`."""
    return {
        "operations": [dict(op) for op in operations],
        "extraMetadata": dict(extra_metadata) if extra_metadata is not None else {},
        "version": version, "strategy": None, "preserveHoodieMetadata": False,
        "missingSchedulePartitions": [],
    }


def clean_file_info(file_path: str, is_bootstrap_base_file: bool = False) -> dict[str, Any]:
    return {"filePath": file_path, "isBootstrapBaseFile": is_bootstrap_base_file}


def clean_plan(policy: str, file_paths_per_partition: Mapping[str, Iterable[str]],
               earliest_instant_to_retain: tuple[str, str, str] | None = None,
               last_completed_commit_timestamp: str = "", partitions_to_be_deleted: Iterable[str] = (),
               extra_metadata: Mapping[str, str] | None = None,
               version: int = LATEST_CLEAN_PLAN_VERSION) -> dict[str, Any]:
    """HoodieCleanerPlan for `<T>.clean.requested`.

    `file_paths_per_partition` holds full file paths (plan version 2); `earliest_instant_to_retain` is
    (timestamp, action, state name such as "COMPLETED").
    """
    earliest = None
    if earliest_instant_to_retain is not None:
        ts, action, state = earliest_instant_to_retain
        earliest = {"timestamp": ts, "action": action, "state": state}
    return {
        "earliestInstantToRetain": earliest, "lastCompletedCommitTimestamp": last_completed_commit_timestamp,
        "policy": policy, "filesToBeDeletedPerPartition": {}, "version": version,
        "filePathsToBeDeletedPerPartition": {p: [clean_file_info(f) for f in files]
                                             for p, files in file_paths_per_partition.items()},
        "partitionsToBeDeleted": list(partitions_to_be_deleted),
        "extraMetadata": dict(extra_metadata) if extra_metadata is not None else {},
    }


def clean_partition_metadata(partition_path: str, policy: str, delete_path_patterns: Iterable[str],
                             success_delete_files: Iterable[str], failed_delete_files: Iterable[str] = (),
                             is_partition_deleted: bool = False) -> dict[str, Any]:
    """One HoodieCleanPartitionMetadata; file names, not paths (clean metadata version 2)."""
    return {
        "partitionPath": partition_path, "policy": policy, "deletePathPatterns": list(delete_path_patterns),
        "successDeleteFiles": list(success_delete_files), "failedDeleteFiles": list(failed_delete_files),
        "isPartitionDeleted": is_partition_deleted,
    }


def clean_metadata(start_clean_time: str, earliest_commit_to_retain: str,
                   partition_metadata: Mapping[str, Mapping[str, Any]],
                   last_completed_commit_timestamp: str = "",
                   time_taken_ms: int = -1, extra_metadata: Mapping[str, str] | None = None,
                   version: int = LATEST_CLEAN_METADATA_VERSION) -> dict[str, Any]:
    """HoodieCleanMetadata for `<T>.clean`."""
    parts = {p: dict(m) for p, m in partition_metadata.items()}
    return {
        "startCleanTime": start_clean_time, "timeTakenInMillis": time_taken_ms,
        "totalFilesDeleted": sum(len(m["successDeleteFiles"]) for m in parts.values()),
        "earliestCommitToRetain": earliest_commit_to_retain,
        "lastCompletedCommitTimestamp": last_completed_commit_timestamp, "partitionMetadata": parts,
        "version": version, "bootstrapPartitionMetadata": {},
        "extraMetadata": dict(extra_metadata) if extra_metadata is not None else {},
    }


def requested_replace_metadata(operation_type: str | None = None,
                               clustering_plan: Mapping[str, Any] | None = None,
                               extra_metadata: Mapping[str, str] | None = None,
                               version: int | None = None) -> dict[str, Any]:
    """HoodieRequestedReplaceMetadata; all-null (the default) is what Spark 0.14/0.15 write for
    insert_overwrite."""
    return {
        "operationType": operation_type,
        "clusteringPlan": dict(clustering_plan) if clustering_plan is not None else None,
        "extraMetadata": dict(extra_metadata) if extra_metadata is not None else None, "version": version,
    }
