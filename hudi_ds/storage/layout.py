"""Where a Hudi table keeps its own files: the one module that spells the `.hoodie/` layout.

Writers, services, readers and the CLI name these folders only through this module, so a change of layout
(or an object store with other constraints) has one place to look. Paths are relative to the table base path.
"""

from __future__ import annotations

HOODIE_DIR = ".hoodie"
PROPS_PATH = f"{HOODIE_DIR}/hoodie.properties"
PROPS_BACKUP_PATH = f"{PROPS_PATH}.backup"
ARCHIVE_DIR = f"{HOODIE_DIR}/archived"  # hoodie.archivelog.folder (layout 1)
HEARTBEAT_DIR = f"{HOODIE_DIR}/.heartbeat"
TEMP_DIR = f"{HOODIE_DIR}/.temp"
AUX_DIR = f"{HOODIE_DIR}/.aux"
# Held while a writer checks for conflicts and publishes its commit (not Apache Hudi's lock file format).
COMMIT_LOCK_PATH = f"{HOODIE_DIR}/.locks/hudi_py_commit_lock.json"
COMMIT_LOCK_WAIT_S = 120.0  # how long a commit or rollback waits for another writer's
STREAMING_PLAN_DIR = f"{AUX_DIR}/hudi_ds/streaming"



def is_table_metadata(rel: str) -> bool:
    """A path inside `.hoodie/` (the table's own or a nested one): never data."""
    return rel.startswith(f"{HOODIE_DIR}/") or f"/{HOODIE_DIR}/" in rel


def temp_dir(instant: str) -> str:
    """Scratch space of one write: markers, bucket claims and staged rows; removed when the instant ends."""
    return f"{TEMP_DIR}/{instant}"


def marker_path(instant: str, data_file: str, io_type: str) -> str:
    """The marker that announces `data_file` (relative path) before the instant writes it."""
    return f"{temp_dir(instant)}/{data_file}.marker.{io_type}"


def executor_path(instant: str) -> str:
    """Which executor holds a compaction plan now (the others must not publish it)."""
    return f"{temp_dir(instant)}/executor"


def claim_path(instant: str, partition: str, bucket: int) -> str:
    return f"{temp_dir(instant)}/claims/{partition or '_'}/{bucket}.claim"


def staged_rows_stem(instant: str, partition: str, file_id: str, write_token: str) -> str:
    group = f"{partition}/{file_id}" if partition else file_id
    return f"{temp_dir(instant)}/deferred/{group}_{write_token}"


def heartbeat_path(instant: str) -> str:
    return f"{HEARTBEAT_DIR}/{instant}"


def streaming_plan_dir(identifier: str) -> str:
    return f"{STREAMING_PLAN_DIR}/{identifier}"
