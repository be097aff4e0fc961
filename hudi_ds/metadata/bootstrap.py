"""Creating a metadata table for an existing version 8/9 table (Hudi's initialisation from the file system), and
dropping one (what Hudi's writers do under hoodie.metadata.enable=false).

The bootstrap lists the committed data files, writes them into the files partition's first base file under the
metadata table's own instant `00000000000000000` (a deltacommit, as Hudi 1.x initialises the partition), and
only then adds `files` to the data table's `hoodie.table.metadata.partitions`: until that line is written no
reader uses the new metadata table, so a bootstrap killed midway leaves the table as it was and the next one
starts afresh. It runs under the commit lock, so no commit completes between the listing and the switch; the
commits that complete afterwards record themselves. Dropping clears the property first, then deletes the folder.
"""

from __future__ import annotations

import dataclasses
import time

from hudi_ds import faults
from hudi_ds.config import properties
from hudi_ds.config.table_config import TableConfig, load_config
from hudi_ds.errors import ConfigError
from hudi_ds.files.naming import PARTITION_METAFILE, parse_base_file, parse_log_file
from hudi_ds.files.view import Visibility
from hudi_ds.metadata import records as md
from hudi_ds.metadata.hfiles import encode_base_file
from hudi_ds.metadata.layout import (
    FILES_FILE_ID,
    INIT_INSTANT,
    METADATA_DIR,
    PARTITIONS_KEY,
    MetadataTable,
    base_name,
    listed_partitions,
    metadata_properties,
)
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S, HOODIE_DIR, PROPS_PATH
from hudi_ds.storage.sub import SubStorage
from hudi_ds.table_format import format_for
from hudi_ds.timeline import Timeline
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat


def committed_files(storage: Storage, timeline: Timeline) -> dict[str, dict[str, int]]:
    """Data partition (every folder with a partition metafile) -> its base and log files written by completed
    instants -> size: what the files partition must list."""
    visibility = Visibility.of(timeline, None, timeline.layout)
    out: dict[str, dict[str, int]] = {}
    for entry in storage.walk_files(""):
        if entry.path.startswith(f"{HOODIE_DIR}/") or f"/{HOODIE_DIR}/" in entry.path:
            continue
        partition, _, name = entry.path.rpartition("/")
        if name == PARTITION_METAFILE:
            out.setdefault(partition, {})
            continue
        ref = parse_base_file(partition, name) or parse_log_file(partition, name)
        if ref is not None and visibility.sees(ref.instant):
            out.setdefault(partition, {})[name] = entry.size
    return out


def _write_data_partitions(storage: Storage, partitions: list[str]) -> None:
    props = properties.loads(properties.decode_bytes(storage.read_bytes(PROPS_PATH)))
    if partitions:
        props[PARTITIONS_KEY] = ",".join(partitions)
    else:
        props.pop(PARTITIONS_KEY, None)
    storage.write_bytes(PROPS_PATH, properties.dumps(props, "Updated by hudi_ds").encode("latin-1",
                                                                                         "backslashreplace"))


def _bootstrap(storage: Storage, config: TableConfig) -> None:
    storage.delete_dir(METADATA_DIR)  # what a killed bootstrap left
    mdt_storage = SubStorage(storage, METADATA_DIR)
    text = properties.dumps(metadata_properties(config.name, config.version), "Properties saved by hudi_ds")
    mdt_storage.write_bytes(PROPS_PATH, text.encode("latin-1", "backslashreplace"))
    fmt = format_for(config.version)
    mdt = MetadataTable(mdt_storage, config.version, fmt)
    listing = committed_files(storage, config.format.load_timeline(storage))
    records = {md.partition_key(p): md.file_list_record(p, files) for p, files in listing.items()}
    records[md.ALL_PARTITIONS_KEY] = md.partition_list_record(listing)
    writer = fmt.timeline_writer(mdt_storage)
    writer.create_requested(INIT_INSTANT, "deltacommit")
    writer.transition_to_inflight(INIT_INSTANT, "deltacommit")
    mdt.ensure_partition(INIT_INSTANT)
    name = base_name(INIT_INSTANT)
    data = encode_base_file(records, config.version, created_ms=int(time.time() * 1000))
    mdt_storage.write_bytes(f"{md.FILES}/{name}", data)
    stat = WriteStat(file_id=FILES_FILE_ID, path=f"{md.FILES}/{name}", num_writes=len(records),
                     num_inserts=len(records), total_write_bytes=len(data), partition_path=md.FILES,
                     file_size_in_bytes=len(data))
    meta = CommitMetadata(partition_to_write_stats={md.FILES: [stat]}, operation_type="BULK_INSERT")
    writer.complete(INIT_INSTANT, "deltacommit", fmt.encode_commit_metadata(meta, "deltacommit"))
    faults.pause_point("metadata_bootstrap_written")  # crash tests: all written but the switch
    _write_data_partitions(storage, sorted({*listed_partitions(storage), md.FILES}))


def _drop(storage: Storage) -> None:
    _write_data_partitions(storage, [])
    storage.delete_dir(METADATA_DIR)


def wanted(config: TableConfig, enable: bool | None) -> bool | None:
    """What hoodie.metadata.enable asks of this table: unset means Apache Hudi 1.x's default, true on versions 8
    and 9 (its writers bootstrap a metadata table on tables that have none), and on version 6 (whose metadata
    table hudi_ds does not write) whatever the table has."""
    if enable is None and config.version >= 8:
        return True
    return enable


def planned_config(config: TableConfig, enable: bool | None) -> TableConfig:
    """The table's config as hoodie.metadata.enable will make it (for the checks a write makes before it
    changes anything): ConfigError when the table's version cannot have a metadata table."""
    enable = wanted(config, enable)
    if enable is None:
        return config
    if enable and config.version < 8:
        raise ConfigError(
            f"hoodie.metadata.enable=true: hudi_ds maintains the metadata table of version 8 and 9 tables, and "
            f"this table is at version {config.version}; upgrade it first (hoodie.write.table.version=9)")
    partitions = sorted({*config.metadata_partitions, md.FILES}) if enable else []
    return dataclasses.replace(config, metadata_partitions=partitions)


def apply_metadata_setting(storage: Storage, config: TableConfig, enable: bool | None) -> TableConfig:
    """Make the table's metadata table follow hoodie.metadata.enable: True creates it (versions 8 and 9),
    False drops it, None (not set) is Hudi's default (`wanted`). Returns the table's config afterwards."""
    planned_config(config, enable)
    enable = wanted(config, enable)
    if enable is None or not _differs(storage, enable):
        return config
    with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
        if _differs(storage, enable):
            if enable:
                _bootstrap(storage, config)
            else:
                _drop(storage)
    return load_config(storage)


def _differs(storage: Storage, enable: bool) -> bool:
    listed = listed_partitions(storage)
    return md.FILES not in listed if enable else bool(listed or storage.list(METADATA_DIR))


# --- across a version change (hudi_ds.upgrade), under the commit lock the change holds ------------------------


def drop_for_version_change(storage: Storage) -> bool:
    """Drop the metadata table before a version change replaces hoodie.properties; returns whether the table
    had one (then `rebuild_after_version_change` builds it again at the new version). Apache Hudi converts the
    metadata table along with the data table; hudi_ds rebuilds it from the converted table instead, which
    needs no second conversion and cannot leave the two at different versions."""
    had = md.FILES in listed_partitions(storage)
    if had or storage.list(METADATA_DIR):
        _drop(storage)
    return had


def rebuild_after_version_change(storage: Storage, config: TableConfig) -> TableConfig:
    """Build the metadata table of a table whose version change dropped it, when the new version can have one
    (8 and 9; version 6 tables are read by listing, as hudi_ds writes them). A crash before this leaves the
    table without one, readable by listing; the next write (hoodie.metadata.enable defaults to true on
    versions 8 and 9) builds it."""
    if config.version < 8:
        return config
    _bootstrap(storage, config)
    return load_config(storage)
