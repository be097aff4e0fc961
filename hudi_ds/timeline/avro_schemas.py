"""Avro schemas of Hudi's timeline instant files, as Python data.

These are format definitions, kept field for field (names, order, types, defaults) as in Apache Hudi's
`hudi-common/src/main/avro/*.avsc`; a named type used by several schemas is written out in full at its
first use, as the compiled Java classes embed it. Versions: HoodieRequestedReplaceMetadata is exactly what
Hudi 0.14/0.15 embed in v6 tables; HoodieCompactionPlan, HoodieCommitMetadata and
HoodieReplaceCommitMetadata are exactly what Hudi 1.x embeds (the tests check both against the reference
tables). The rollback and clean schemas follow the upstream files of the 0.14+ line. Every field a newer or
older Java reader might lack has a default, so Avro schema resolution lets Hudi 0.14–1.1 read what we write.
"""

from __future__ import annotations

from typing import Any

Schema = dict[str, Any]
NAMESPACE = "org.apache.hudi.avro.model"
NO_DEFAULT = object()


def avro_field(name: str, type_: Any, default: Any = NO_DEFAULT, doc: str | None = None) -> dict[str, Any]:
    """One record field; key order name, type, doc, default matches Java's Schema.toString()."""
    out: dict[str, Any] = {"name": name, "type": type_}
    if doc is not None:
        out["doc"] = doc
    if default is not NO_DEFAULT:
        out["default"] = default
    return out


def _opt(name: str, type_: Any) -> dict[str, Any]:
    """The common `["null", T]` field with default null."""
    return avro_field(name, ["null", type_], None)


def _version(default: int = 1) -> dict[str, Any]:
    return avro_field("version", ["int", "null"], default)


def _record(name: str, fields: list[dict[str, Any]], top: bool = False) -> Schema:
    out: Schema = {"type": "record", "name": name}
    if top:
        out["namespace"] = NAMESPACE
    out["fields"] = fields
    return out


def _array(items: Any, **props: Any) -> Schema:
    return {"type": "array", "items": items, **props}


def _map(values: Any, **props: Any) -> Schema:
    return {"type": "map", "values": values, **props}


STRING_MAP = _map("string")

# --- shared named types -------------------------------------------------------------------------------------

INSTANT_INFO: Schema = _record("HoodieInstantInfo", [
    avro_field("commitTime", "string"), avro_field("action", "string"),
])

ACTION_INSTANT: Schema = _record("HoodieActionInstant", [
    avro_field("timestamp", "string"), avro_field("action", "string"), avro_field("state", "string"),
])

# --- rollback (HoodieRollbackPlan.avsc, HoodieRollbackMetadata.avsc) ----------------------------------------

ROLLBACK_PLAN: Schema = _record("HoodieRollbackPlan", [
    avro_field("instantToRollback", ["null", INSTANT_INFO], None,
           doc="Hoodie instant that needs to be rolled back"),
    _opt("RollbackRequests", _array(_record("HoodieRollbackRequest", [
        avro_field("partitionPath", "string"),
        _opt("fileId", "string"),
        _opt("latestBaseInstant", "string"),
        avro_field("filesToBeDeleted", _array("string", default=[]), []),
        _opt("logBlocksToBeDeleted", _map(
            {"type": "long", "doc": "Size of this file/block in bytes"},
            doc="Log blocks that need to be deleted as part of the rollback")),
    ]))),
    _version(),
], top=True)

_SIZE_OF_FILE = {"type": "long", "doc": "Size of this file in bytes"}

ROLLBACK_METADATA: Schema = _record("HoodieRollbackMetadata", [
    avro_field("startRollbackTime", "string"),
    avro_field("timeTakenInMillis", "long"),
    avro_field("totalFilesDeleted", "int"),
    avro_field("commitsRollback", _array("string")),
    avro_field("partitionMetadata", _map(_record("HoodieRollbackPartitionMetadata", [
        avro_field("partitionPath", "string"),
        avro_field("successDeleteFiles", _array("string")),
        avro_field("failedDeleteFiles", _array("string")),
        _opt("rollbackLogFiles", _map(
            _SIZE_OF_FILE, doc="Files to which append blocks were written to capture rollback commit")),
        _opt("logFilesFromFailedCommit", _map(_SIZE_OF_FILE)),
    ]))),
    _version(),
    avro_field("instantsRollback", _array(INSTANT_INFO, default=[]), []),
], top=True)

# --- clean (HoodieCleanerPlan.avsc, HoodieCleanMetadata.avsc, HoodieCleanPartitionMetadata.avsc) ------------

CLEANER_PLAN: Schema = _record("HoodieCleanerPlan", [
    _opt("earliestInstantToRetain", ACTION_INSTANT),
    avro_field("lastCompletedCommitTimestamp", "string", ""),
    avro_field("policy", "string"),
    # deprecated since plan version 2 (file names); replaced by filePathsToBeDeletedPerPartition (full paths)
    _opt("filesToBeDeletedPerPartition", _map(_array({"name": "filePath", "type": "string"}))),
    _version(),
    avro_field("filePathsToBeDeletedPerPartition", ["null", _map(_array(_record("HoodieCleanFileInfo", [
        _opt("filePath", "string"),
        _opt("isBootstrapBaseFile", "boolean"),
    ])))], None, doc="This field replaces the field filesToBeDeletedPerPartition"),
    avro_field("partitionsToBeDeleted", ["null", _array("string")], None, doc="partitions to be deleted"),
    _opt("extraMetadata", _map("string", default=None)),
], top=True)

CLEAN_PARTITION_METADATA: Schema = _record("HoodieCleanPartitionMetadata", [
    avro_field("partitionPath", "string"),
    avro_field("policy", "string"),
    avro_field("deletePathPatterns", _array("string")),
    avro_field("successDeleteFiles", _array("string")),
    avro_field("failedDeleteFiles", _array("string")),
    _opt("isPartitionDeleted", "boolean"),
])

CLEAN_METADATA: Schema = _record("HoodieCleanMetadata", [
    avro_field("startCleanTime", "string"),
    avro_field("timeTakenInMillis", "long"),
    avro_field("totalFilesDeleted", "int"),
    avro_field("earliestCommitToRetain", "string"),
    avro_field("lastCompletedCommitTimestamp", "string", ""),
    avro_field("partitionMetadata", _map(CLEAN_PARTITION_METADATA)),
    _version(),
    _opt("bootstrapPartitionMetadata", _map("HoodieCleanPartitionMetadata", default=None)),
    _opt("extraMetadata", _map("string", default=None)),
], top=True)

# --- compaction (HoodieCompactionOperation.avsc, HoodieCompactionStrategy.avsc), as Hudi 1.x embeds it ------

COMPACTION_PLAN: Schema = _record("HoodieCompactionPlan", [
    _opt("operations", _array(_record("HoodieCompactionOperation", [
        avro_field("baseInstantTime", ["null", "string"]),
        _opt("deltaFilePaths", _array("string")),
        _opt("dataFilePath", "string"),
        avro_field("fileId", ["null", "string"]),
        _opt("partitionPath", "string"),
        _opt("metrics", _map("double")),
        _opt("bootstrapFilePath", "string"),
    ]))),
    _opt("extraMetadata", STRING_MAP),
    _version(),
    _opt("strategy", _record("HoodieCompactionStrategy", [
        avro_field("compactorClassName", ["null", "string"], None, doc=(
            "The class name that is provided here should extend CompactionExecutionStrategy abstract "
            "class, idea is that the plan generator will also provide the execution strategy to use.")),
        avro_field("strategyParams", ["null", STRING_MAP], None, doc=(
            "These parameters play a key role in determining which action type it is i.e. compaction or "
            "logcompaction and it will also include configs that determine how compaction needs to be "
            "executed.")),
        _version(),
    ])),
    avro_field("preserveHoodieMetadata", ["boolean", "null"], False),
    _opt("missingSchedulePartitions", _array("string")),
], top=True)

# --- replace (HoodieRequestedReplaceMetadata.avsc + HoodieClusteringPlan/Group/SliceInfo/Strategy), as 0.14/0

REQUESTED_REPLACE_METADATA: Schema = _record("HoodieRequestedReplaceMetadata", [
    _opt("operationType", "string"),
    _opt("clusteringPlan", _record("HoodieClusteringPlan", [
        _opt("inputGroups", _array(_record("HoodieClusteringGroup", [
            _opt("slices", _array(_record("HoodieSliceInfo", [
                _opt("dataFilePath", "string"),
                _opt("deltaFilePaths", _array("string")),
                avro_field("fileId", ["null", "string"]),
                _opt("partitionPath", "string"),
                _opt("bootstrapFilePath", "string"),
                _version(),
            ]))),
            _opt("metrics", _map("double")),
            avro_field("numOutputFileGroups", ["int", "null"], 1),
            _opt("extraMetadata", STRING_MAP),
            _version(),
        ]))),
        _opt("strategy", _record("HoodieClusteringStrategy", [
            _opt("strategyClassName", "string"),
            _opt("strategyParams", STRING_MAP),
            _version(),
        ])),
        _opt("extraMetadata", STRING_MAP),
        _version(),
        _opt("preserveHoodieMetadata", "boolean"),
    ])),
    _opt("extraMetadata", STRING_MAP),
    _version(),
], top=True)

# --- commit metadata (HoodieCommitMetadata.avsc, HoodieReplaceCommitMetadata.avsc), as Hudi 1.x embeds them -


def _write_stat() -> Schema:
    longs = ("numWrites", "numDeletes", "numUpdateWrites", "totalWriteBytes", "totalWriteErrors")
    return _record("HoodieWriteStat", [
        _opt("fileId", "string"), _opt("path", "string"), _opt("prevCommit", "string"),
        *(_opt(n, "long") for n in longs),
        _opt("partitionPath", "string"),
        _opt("totalLogRecords", "long"), _opt("totalLogFiles", "long"),
        _opt("totalUpdatedRecordsCompacted", "long"),
        _opt("numInserts", "long"), _opt("totalLogBlocks", "long"), _opt("totalCorruptLogBlock", "long"),
        _opt("totalRollbackBlocks", "long"), _opt("fileSizeInBytes", "long"),
        _opt("logVersion", "int"), _opt("logOffset", "long"), _opt("baseFile", "string"),
        _opt("logFiles", _array("string", default=None)),
        _opt("cdcStats", _map("long", default=None)),
        _opt("prevBaseFile", "string"),
        _opt("minEventTime", "long"), _opt("maxEventTime", "long"),
        _opt("runtimeStats", _record("HoodieRuntimeStats", [
            _opt("totalScanTime", "long"), _opt("totalCreateTime", "long"), _opt("totalUpsertTime", "long"),
        ])),
        _opt("totalLogFilesCompacted", "long"), _opt("totalLogReadTimeMs", "long"),
        _opt("totalLogSizeCompacted", "long"), _opt("tempPath", "string"), _opt("numUpdates", "long"),
    ])


COMMIT_METADATA: Schema = _record("HoodieCommitMetadata", [
    _opt("partitionToWriteStats", _map(_array(_write_stat()))),
    _opt("compacted", "boolean"),
    _opt("extraMetadata", _map("string", default=None)),
    _version(),
    _opt("operationType", "string"),
], top=True)

REPLACE_COMMIT_METADATA: Schema = _record("HoodieReplaceCommitMetadata", [
    _opt("partitionToWriteStats", _map(_array(_write_stat()))),
    _opt("compacted", "boolean"),
    _opt("extraMetadata", STRING_MAP),
    _version(),
    _opt("operationType", "string"),
    _opt("partitionToReplaceFileIds", _map(_array("string"))),
], top=True)

ALL_SCHEMAS: dict[str, Schema] = {s["name"]: s for s in (
    ROLLBACK_PLAN, ROLLBACK_METADATA, CLEANER_PLAN, CLEAN_METADATA, COMPACTION_PLAN,
    REQUESTED_REPLACE_METADATA, COMMIT_METADATA, REPLACE_COMMIT_METADATA,
)}
