"""The Avro schema of archived timeline entries (HoodieArchivedMetaEntry, Hudi 0.14/0.15, layout 1).

A format definition, field for field as `hudi-common/src/main/avro/HoodieArchivedMetaEntry.avsc` of the 0.14
line, with the nested schemas hudi_ds already keeps for instant files. A named type is written out in full
at its first use and referred to by name afterwards, as Java's Schema.toString() prints it (Avro forbids
redefining a name). Every field is a union with null and a default, so Java reads it with its own schema.
"""

from __future__ import annotations

import copy
from typing import Any

from hudi_ds.timeline.avro_schemas import (
    CLEAN_METADATA,
    CLEANER_PLAN,
    COMMIT_METADATA,
    COMPACTION_PLAN,
    NAMESPACE,
    REPLACE_COMMIT_METADATA,
    REQUESTED_REPLACE_METADATA,
    ROLLBACK_METADATA,
    Schema,
)

_COMPACTION_METADATA: Schema = {  # deprecated, never written; kept so the union type exists
    "type": "record", "name": "HoodieCompactionMetadata", "namespace": NAMESPACE, "fields": [
        {"name": "partitionToCompactionWriteStats", "type": ["null", {
            "type": "map", "values": {"type": "array", "items": {
                "type": "record", "name": "HoodieCompactionWriteStat", "fields": [
                    {"name": "partitionPath", "type": ["null", "string"]},
                    {"name": "totalLogRecords", "type": ["null", "long"]},
                    {"name": "totalLogFiles", "type": ["null", "long"]},
                    {"name": "totalUpdatedRecordsCompacted", "type": ["null", "long"]},
                    {"name": "hoodieWriteStat", "type": ["null", "HoodieWriteStat"]},
                ]}}}]},
    ]}

_SAVEPOINT_METADATA: Schema = {
    "type": "record", "name": "HoodieSavepointMetadata", "namespace": NAMESPACE, "fields": [
        {"name": "savepointedBy", "type": "string"},
        {"name": "savepointedAt", "type": "long"},
        {"name": "comments", "type": "string"},
        {"name": "partitionMetadata", "type": {"type": "map", "values": {
            "type": "record", "name": "HoodieSavepointPartitionMetadata", "fields": [
                {"name": "partitionPath", "type": "string"},
                {"name": "savepointDataFile", "type": {"type": "array", "items": "string"}},
            ]}}},
    ]}

_INDEX_COMMIT_METADATA: Schema = {
    "type": "record", "name": "HoodieIndexCommitMetadata", "namespace": NAMESPACE, "fields": [
        {"name": "version", "type": ["int", "null"], "default": 1},
        {"name": "operationType", "type": ["null", "string"], "default": None},
        {"name": "indexPartitionInfos", "type": ["null", {"type": "array", "items": {
            "type": "record", "name": "HoodieIndexPartitionInfo", "fields": [
                {"name": "version", "type": ["int", "null"], "default": 1},
                {"name": "metadataPartitionPath", "type": ["null", "string"], "default": None},
                {"name": "indexUptoInstant", "type": ["null", "HoodieInstantInfo"], "default": None},
            ]}}], "default": None},
    ]}


def _opt(name: str, schema: Any) -> dict[str, Any]:
    return {"name": name, "type": ["null", schema], "default": None}


def _dedupe(node: Any, seen: set[str]) -> Any:
    """Replace every named record after its first definition by its name (walk in field order)."""
    if isinstance(node, list):
        return [_dedupe(x, seen) for x in node]
    if not isinstance(node, dict):
        return node
    if node.get("type") == "record":
        if node["name"] in seen:
            return node["name"]
        seen.add(node["name"])
        out = {k: v for k, v in node.items() if k != "fields"}
        out["fields"] = [{**f, "type": _dedupe(f["type"], seen)} for f in node["fields"]]
        return out
    out = dict(node)
    for key in ("items", "values"):
        if key in out:
            out[key] = _dedupe(out[key], seen)
    if isinstance(out.get("type"), (dict, list)):
        out["type"] = _dedupe(out["type"], seen)
    return out


ARCHIVED_META_ENTRY: Schema = _dedupe(copy.deepcopy({
    "type": "record", "name": "HoodieArchivedMetaEntry", "namespace": NAMESPACE, "fields": [
        _opt("hoodieCommitMetadata", COMMIT_METADATA),
        _opt("hoodieCleanMetadata", CLEAN_METADATA),
        _opt("hoodieCompactionMetadata", _COMPACTION_METADATA),
        _opt("hoodieRollbackMetadata", ROLLBACK_METADATA),
        _opt("hoodieSavePointMetadata", _SAVEPOINT_METADATA),
        {"name": "commitTime", "type": ["null", "string"], "default": None},
        {"name": "actionType", "type": ["null", "string"], "default": None},
        {"name": "version", "type": ["int", "null"], "default": 1},
        _opt("hoodieCompactionPlan", COMPACTION_PLAN),
        _opt("hoodieCleanerPlan", CLEANER_PLAN),
        {"name": "actionState", "type": ["null", "string"], "default": None},
        _opt("hoodieReplaceCommitMetadata", REPLACE_COMMIT_METADATA),
        _opt("hoodieRequestedReplaceMetadata", REQUESTED_REPLACE_METADATA),
        _opt("HoodieInflightReplaceMetadata", "HoodieCommitMetadata"),
        _opt("hoodieIndexCommitMetadata", _INDEX_COMMIT_METADATA),
        {"name": "stateTransitionTime", "type": ["null", "string"], "default": None},
    ]}), set())

ENTRY_FIELDS: tuple[str, ...] = tuple(f["name"] for f in ARCHIVED_META_ENTRY["fields"])
