"""Table versions over a table's life: which version a write keeps, and upgrades (6 -> 8 -> 9) and downgrades
(9 -> 8 -> 6) done as Apache Hudi's UpgradeDowngrade does them.

Apache Hudi's rule (`hoodie.write.table.version`, `hoodie.write.auto.upgrade`): an existing table is written at
its own version; a writer asking for a higher one upgrades it first when auto-upgrade is on, and keeps the table's
version when it is off; asking for a lower one is an error (downgrades are explicit).

A version change, step by step:
1. Refuse what cannot be converted exactly (a version 6 metadata table, a bootstrap table, payloads and merge
   settings whose other form hudi_ds does not know, features only version 9 has on a downgrade), and read and
   convert every instant and archive file in memory (a damaged one is named), before anything is written.
2. Prepare as Hudi does: roll back failed writes (a pending write whose heartbeat is fresh refuses the change), and
   on merge-on-read tables compact every file slice with log files (a compaction a killed earlier attempt left is
   taken over at once). These are ordinary table operations, crash-safe on their own.
3. Under the commit lock for all that follows: check that no write or compaction is pending (else back to 2, a few
   times), compute the new timeline in memory, check that the table reads the same under the rules of both
   versions (version 6 orders commits and slices files by requested time, 8 and 9 by completion time), then write
   the new layout's files beside the old ones: the instants into the other timeline folder; on an upgrade the
   archive into the LSM history, on a downgrade the history's instants into the active timeline (the next
   archiving of the version 6 table moves them into its archive).
4. Check the old timeline did not change meanwhile (on an object store the lock is a lease a slow step could
   outlive; else back to 3), drop the metadata table (property first, then folder: readers list files meanwhile),
   write `.hoodie/hoodie.properties.backup` (the old properties), then replace hoodie.properties in one atomic
   write.
5. Delete the old layout's files, then the backup; a table that had a metadata table gets it built again from
   its files when the new version can have one (8 or 9), as a write's bootstrap builds it (atomic on its own).
Between versions of one layout (8 and 9) only the properties change (and the metadata table is rebuilt): steps
1, 2, 4 and 5.

Why a SIGKILL at any moment leaves a table that reads the same, and a rerun finishes the job: every reader (hudi_ds,
hudi-rs, Apache Hudi) follows hoodie.properties to one timeline folder and one archive, and ignores the other
layout's. Before step 4 hoodie.properties names the old version and the old files are untouched: the table reads as
before, and a rerun starts over, rewriting what the new folders must hold (keeping the files a killed run wrote
completely, deleting those no longer due: writers may have committed since). Step 4's replace is atomic (a local
rename, one PUT on object stores): readers see the old properties or the new ones, and the new version's files are
all in place by then. After it, the old layout's files are leftovers nobody reads; the backup, deleted last, marks
them as such, and every later upgrade or downgrade first finishes step 5 when it finds a backup of another version.

A writer that loaded the old properties before step 4 cannot publish into the new layout's table: under the commit
lock its commit checks the table is still at the version it wrote (`require_version`), and rolls back otherwise.
"""

from __future__ import annotations

from dataclasses import replace
from typing import Any

from hudi_ds import faults
from hudi_ds.config import properties
from hudi_ds.config.options import HudiOptions
from hudi_ds.config.table_config import TableConfig, load_config
from hudi_ds.config.writable import check_timeline_writable
from hudi_ds.errors import ConfigError, CorruptTableError, InstantStateError, UnsupportedTableError
from hudi_ds.files.compaction_plan import pending_compactions
from hudi_ds.files.view import FileSystemView, Visibility
from hudi_ds.metadata import column_stats_sync
from hudi_ds.metadata import record_index_sync as record_index
from hudi_ds.metadata import records as md
from hudi_ds.metadata.bootstrap import drop_for_version_change, rebuild_after_version_change
from hudi_ds.metadata.layout import PARTITIONS_KEY, listed_partitions
from hudi_ds.recovery.heartbeat import DEFAULT_HEARTBEAT_TIMEOUT_S, heartbeat_age
from hudi_ds.recovery.rollback import rollback_failed_writes
from hudi_ds.services import compaction
from hudi_ds.services.target import TableFiles
from hudi_ds.storage import Storage
from hudi_ds.storage.layout import (
    COMMIT_LOCK_PATH,
    COMMIT_LOCK_WAIT_S,
    HOODIE_DIR,
    PROPS_BACKUP_PATH,
    PROPS_PATH,
)
from hudi_ds.table_format import TableFormat
from hudi_ds.timeline import State, Timeline
from hudi_ds.timeline.archived import read_archived, with_history
from hudi_ds.timeline.instant import COMMIT_ACTIONS, action_family
from hudi_ds.timeline.lsm_history import append_history, rows_from_archived
from hudi_ds.upgrade_properties import downgraded_properties, upgraded_properties
from hudi_ds.upgrade_timeline import MovedFile, key_of, listed_instants, moved_timeline, restored_history

__all__ = ["check_version", "downgrade", "require_version", "upgrade"]

VERSION_CHANGE_OWNER = "hudi-py-version-change"  # owns the compactions a version change runs (a rerun takes over)
_ATTEMPTS = 3
_HISTORY_BATCH = 10  # hoodie.commits.archival.batch: instants per history file, as Hudi's upgrade writes them


def check_version(storage: Storage, opts: HudiOptions, config: TableConfig) -> TableConfig:
    """The table config a write proceeds with: the table as it is, or upgraded to the version `opts` asks for."""
    if not opts.is_set("table_version") or opts.table_version == config.version:
        return config
    if opts.table_version < config.version:
        raise ConfigError(
            f"hoodie.write.table.version={opts.table_version} but the table at {storage.uri} is version "
            f"{config.version}; a write never downgrades a table. Drop the option, or downgrade the table first: "
            f"hudi-py downgrade {storage.uri} --to {opts.table_version}")
    if not opts.auto_upgrade:
        return config  # Hudi keeps the table's version when auto-upgrade is off
    return upgrade(storage, config, opts.table_version, heartbeat_timeout_s=opts.heartbeat_timeout_s)


def upgrade(storage: Storage, config: TableConfig, to_version: int, *,
            heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S) -> TableConfig:
    """Upgrade a version 6 table to 8 or 9, or 8 to 9 (see the module doc); returns the table's new config. On a
    table at `to_version` already, finishes an upgrade a crash interrupted (and does nothing else). `config` is the
    table's as the caller loaded it; the change reads it again (another process may have changed it)."""
    if to_version not in (8, 9):
        raise ConfigError(f"hudi_ds upgrades tables to version 8 or 9, not {to_version}")
    _check_direction(storage, config, to_version, up=True)
    return _change(storage, to_version, True, heartbeat_timeout_s)


def downgrade(storage: Storage, config: TableConfig, to_version: int, *,
              heartbeat_timeout_s: float = DEFAULT_HEARTBEAT_TIMEOUT_S) -> TableConfig:
    """Downgrade a version 9 table to 8 or 6, or 8 to 6, where nothing the table holds needs the newer version
    (see the module doc); returns the table's new config."""
    if to_version not in (6, 8):
        raise ConfigError(f"hudi_ds downgrades tables to version 6 or 8, not {to_version}")
    _check_direction(storage, config, to_version, up=False)
    return _change(storage, to_version, False, heartbeat_timeout_s)


def _check_direction(storage: Storage, config: TableConfig, to_version: int, up: bool) -> None:
    if up and config.version > to_version:
        raise ConfigError(f"the table at {storage.uri} is version {config.version}, above {to_version}; to lower its "
                          f"version: hudi-py downgrade {storage.uri} --to {to_version}")
    if not up and config.version < to_version:
        raise ConfigError(f"the table at {storage.uri} is version {config.version}, below {to_version}; to raise its "
                          f"version: hudi-py upgrade {storage.uri} --to {to_version}")


def require_version(storage: Storage, config: TableConfig) -> str | None:
    """Why a write that began on `config` must not publish (the table changed version meanwhile), or None. Called
    under the commit lock, which every version change holds."""
    now = load_config(storage)
    if now.version == config.version:
        return None
    return (f"the table was changed from version {config.version} to {now.version} while this write ran (hudi-py "
            "upgrade/downgrade, or a write with hoodie.write.table.version); open the table again to write it")


# --- the change --------------------------------------------------------------------------------------------


def _change(storage: Storage, to_version: int, up: bool, timeout_s: float) -> TableConfig:
    config = load_config(storage)
    _check_direction(storage, config, to_version, up)
    if config.version != to_version:  # step 1: refusals and unreadable files, before anything is written
        new_fmt = TableConfig.from_properties(_new_properties(storage, config, to_version)).format
        _new_layout_files(storage, config, new_fmt, check_reads=False)
    for _ in range(_ATTEMPTS):
        if config.version != to_version:
            _prepare(storage, config, timeout_s)
            faults.pause_point("version_prepared")
        with storage.lock(COMMIT_LOCK_PATH, COMMIT_LOCK_WAIT_S):
            config = load_config(storage)
            _finish_interrupted(storage, config)
            _check_direction(storage, config, to_version, up)
            if config.version == to_version:
                return config
            props = _new_properties(storage, config, to_version)
            if _quiet(storage, config, to_version, timeout_s):
                done = _switch(storage, config, props)
                if done is not None:
                    return done
    raise InstantStateError(
        f"writes kept landing on {storage.uri} while its version was being changed (each attempt found new pending "
        "writes or log files to compact); stop the writers and run the command again")


def _new_properties(storage: Storage, config: TableConfig, to_version: int) -> dict[str, str]:
    """The table's properties at `to_version`; refuses tables whose change hudi_ds cannot do exactly."""
    check_timeline_writable(config)  # a version we write, metadata partitions we keep, a merge mode we keep
    if config.version < 8 and storage.is_dir(f"{HOODIE_DIR}/metadata"):
        raise UnsupportedTableError(
            f"{storage.uri} has a metadata table (.hoodie/metadata) of version {config.version}, which hudi_ds "
            f"does not convert; drop it first (hudi-py metadata drop {storage.uri}, or a write with "
            "hoodie.metadata.enable=false by hudi-py or Apache Hudi): after the upgrade a write builds the "
            "version's own")
    indexes = [p for p in config.metadata_partitions if p.startswith(md.SECONDARY_INDEX_PREFIX)]
    if indexes:  # the metadata table is rebuilt at the new version: hudi_ds does not build secondary indexes
        raise UnsupportedTableError(
            f"the table has secondary indexes ({', '.join(indexes)}), which a version change would lose with the "
            "metadata table it rebuilds (hudi_ds does not build them); change its version with Apache Hudi, or drop "
            "them first (Hudi's DROP INDEX, or hudi-py metadata drop PATH)")
    if config.raw.get("hoodie.bootstrap.base.path"):
        raise UnsupportedTableError(
            "the table is a bootstrap table (hoodie.bootstrap.base.path), whose bootstrap index hudi_ds does not "
            "convert; change its version with Apache Hudi")
    raw = dict(config.raw)
    if to_version > config.version:
        return upgraded_properties(raw, to_version)
    return downgraded_properties(raw, to_version)


def _prepare(storage: Storage, config: TableConfig, timeout_s: float) -> None:
    """Step 2: roll back crashed writes, refuse live ones, and compact a merge-on-read table (Hudi's
    rollbackFailedWritesAndCompact)."""
    rollback_failed_writes(storage, config, timeout_s=timeout_s)
    timeline = config.format.load_timeline(storage)
    _refuse_live_writes(storage, timeline, timeout_s)
    if not config.is_mor or not (pending_compactions(timeline) or _slices_with_logs(storage, config, timeline)):
        return
    target = TableFiles(storage, config)
    compaction.schedule_compaction(target, min_delta_commits=1, wait_s=0)
    compaction.run_compaction(target, wait_s=0, heartbeat_timeout_s=timeout_s, owner=VERSION_CHANGE_OWNER)


def _refuse_live_writes(storage: Storage, timeline: Timeline, timeout_s: float) -> None:
    """InstantStateError naming a pending write whose heartbeat is fresh: its writer may be running."""
    for inst in timeline.pending():
        if inst.action not in COMMIT_ACTIONS:
            continue
        age = heartbeat_age(storage, inst.requested_time)
        if age is not None and age < timeout_s:
            raise InstantStateError(
                f"instant {inst.requested_time} ({inst.action}) is pending and its writer beat {age:.0f} s ago: a "
                "write is running. Change the version when no writer runs (or, if its writer is gone, roll it back: "
                f"hudi-py rollback {storage.uri} {inst.requested_time} --force)")


def _slices_with_logs(storage: Storage, config: TableConfig, timeline: Timeline) -> list[str]:
    """Log files of the latest file slices (what a compaction would merge)."""
    view = FileSystemView(storage, config, timeline, Visibility.of(timeline, None, timeline.layout))
    return [lf.path for sl in view.latest_slices() for lf in sl.log_files]


def _quiet(storage: Storage, config: TableConfig, to_version: int, timeout_s: float) -> bool:
    """Under the lock: whether nothing is pending that the change would have to carry (False: prepare again).
    Readers of version 6 (Hudi 0.x, hudi-rs) attach a log file to the slice of the base instant its name
    carries, which a version 8/9 log's name is not: a downgrade needs the latest slices compacted."""
    timeline = config.format.load_timeline(storage)
    _refuse_live_writes(storage, timeline, timeout_s)
    for inst in pending_compactions(timeline):
        age = heartbeat_age(storage, inst.requested_time)
        if inst.state is not State.REQUESTED and age is not None and age < timeout_s:
            raise InstantStateError(
                f"compaction {inst.requested_time} is being executed (its executor beat {age:.0f} s ago); change the "
                "version once it completed")
    if any(not i.is_completed and i.action in COMMIT_ACTIONS for i in timeline.instants) or \
            pending_compactions(timeline):
        return False
    to_layout1 = config.format.layout == 2 and to_version == 6
    return not (to_layout1 and config.is_mor and _slices_with_logs(storage, config, timeline))


def _switch(storage: Storage, config: TableConfig, props: dict[str, str]) -> TableConfig | None:
    """Steps 3 to 5, under the commit lock; None (nothing switched) when the old timeline changed meanwhile: on an
    object store the lock is a lease that a slow step could outlive."""
    new = TableConfig.from_properties(props)
    old_fmt, new_fmt = config.format, new.format
    read = _old_files(storage, old_fmt)
    if old_fmt.layout != new_fmt.layout:
        moved, history = _new_layout_files(storage, config, new_fmt, check_reads=True)
        _write_timeline(storage, old_fmt, new_fmt, moved)
        if new_fmt.layout == 2:
            storage.delete_dir(new_fmt.archive_dir)  # a killed run's partial history
            for start in range(0, len(history), _HISTORY_BATCH):
                append_history(storage, new_fmt.archive_dir, history[start:start + _HISTORY_BATCH])
            faults.pause_point("version_history_written")
    if _old_files(storage, old_fmt) != read:
        return None
    had_record_index = md.RECORD_INDEX in listed_partitions(storage)
    had_column_stats = md.COLUMN_STATS in listed_partitions(storage)
    had_metadata_table = drop_for_version_change(storage)
    props.pop(PARTITIONS_KEY, None)
    faults.pause_point("version_metadata_dropped")
    storage.write_bytes(PROPS_BACKUP_PATH, storage.read_bytes(PROPS_PATH))
    faults.pause_point("version_backup_written")
    text = properties.dumps(props, "Updated by hudi_ds")
    storage.write_bytes(PROPS_PATH, text.encode("latin-1", "backslashreplace"))
    faults.pause_point("version_switched")
    _remove_old_layout(storage, old_fmt, new_fmt)
    storage.delete(PROPS_BACKUP_PATH)
    config = load_config(storage)
    if not had_metadata_table:
        return config
    config = rebuild_after_version_change(storage, config)
    config = record_index.rebuild_after_version_change(storage, config) if had_record_index else config
    return column_stats_sync.rebuild_after_version_change(storage, config) if had_column_stats else config


def _old_files(storage: Storage, fmt: TableFormat) -> list[tuple[str, int]]:
    """The timeline and archive files a change reads, with their sizes."""
    files = [e for e, _ in listed_instants(storage, fmt)] + storage.list(fmt.archive_dir)
    return sorted((e.path, e.size) for e in files)


def _new_layout_files(storage: Storage, config: TableConfig, new_fmt: TableFormat,
                      check_reads: bool) -> tuple[list[MovedFile], list[dict[str, Any]]]:
    """Everything the new layout holds, read and converted in memory: the instant files (checked to read the same
    if asked), and the rows of the LSM history (layout 1 -> 2: the archive converted). Layout 2 -> 1: the
    history's instants return to the active timeline, which the next archiving moves into the version 6 archive."""
    old_fmt = config.format
    if old_fmt.layout == new_fmt.layout:
        return [], []
    if check_reads:
        moved = _moved_reading_the_same(storage, config, new_fmt)
    else:
        moved = moved_timeline(storage, old_fmt, new_fmt, config.timezone)
    if old_fmt.layout == 1:
        return moved, rows_from_archived(read_archived(storage, old_fmt.archive_dir))
    active = {(m.instant.requested_time, action_family(m.instant.action)) for m in moved}
    restored = [m for m in restored_history(storage, old_fmt, new_fmt)
                if (m.instant.requested_time, action_family(m.instant.action)) not in active]
    return moved + restored, []


def _moved_reading_the_same(storage: Storage, config: TableConfig, new_fmt: TableFormat) -> list[MovedFile]:
    """The timeline in the new layout, with completion times under which the table reads as before: the files'
    modification times, as Hudi takes them, unless they would order commits or slice files otherwise than the
    requested times do (a table copied without its modification times); then the requested times themselves."""
    old_fmt = config.format
    timeline = old_fmt.load_timeline(storage)
    moved = moved_timeline(storage, old_fmt, new_fmt, config.timezone)
    problem = _reads_otherwise(storage, config, timeline, moved)
    if problem is not None and new_fmt.layout == 2:
        moved = moved_timeline(storage, old_fmt, new_fmt, None)
        problem = _reads_otherwise(storage, config, timeline, moved)
    if problem is not None:
        raise UnsupportedTableError(problem)
    return moved


def _reads_otherwise(storage: Storage, config: TableConfig, timeline: Timeline, moved: list[MovedFile]) -> str | None:
    """Why the table would read otherwise at the new version (None: it reads the same). Versions 8/9 order commits
    and slice files by completion time, version 6 by requested time: the two must agree on the order of the
    commits that write records (it breaks ties between equal ordering values), and on the file slice of every log
    file (the rows it merges with)."""
    ours = Visibility.of(timeline, None, timeline.layout)
    if timeline.layout == 1:
        # the archived commits' completion times as the history will hold them (a log of an archived commit
        # is sliced by it)
        completion = {str(r["instantTime"]): str(r["completionTime"])
                      for r in rows_from_archived(read_archived(storage, config.format.archive_dir))}
        completion.update({m.instant.requested_time: m.instant.completion_time or m.instant.requested_time
                           for m in moved if m.instant.is_completed})
        theirs = replace(ours, completion=completion, uses_completion_time=True)
    else:
        completion = {i.requested_time: i.completion_time or i.requested_time for i in with_history(timeline).commits()}
        theirs = replace(ours, uses_completion_time=False)
    everything = with_history(timeline)
    writes = [i.requested_time for i in everything.commits() if not everything.commit_metadata(i).compacted]
    for earlier, later in zip(sorted(writes), sorted(writes)[1:], strict=False):
        if completion.get(earlier, earlier) > completion.get(later, later):
            return (f"commit {later} completed before commit {earlier}, which was requested first: versions 8/9 order "
                    "commits by completion time, version 6 by requested time, and rows of equal ordering value "
                    "would merge in another order")
    before = FileSystemView(storage, config, timeline, ours).groups
    after = FileSystemView(storage, config, timeline, theirs).groups
    for key in sorted(set(before) | set(after)):
        was = {lf.path: sl.base_instant for sl in before.get(key, []) for lf in sl.log_files}
        now = {lf.path: sl.base_instant for sl in after.get(key, []) for lf in sl.log_files}
        for path in sorted(set(was) | set(now)):
            if was.get(path) != now.get(path):
                return (f"log file {path} belongs to the file slice of {was.get(path)} now and would belong to that "
                        f"of {now.get(path)} at the new version (the versions slice files by different times), so "
                        "its rows would merge differently. Compact and clean the table (hudi-py compact / clean) "
                        "until no slice with such logs is kept, then retry")
    return None


def _write_timeline(storage: Storage, old: TableFormat, new: TableFormat, moved: list[MovedFile]) -> None:
    """Step 3: the new timeline folder holds exactly the moved files (a killed run's complete files are kept)."""
    targets = {m.target for m in moved}
    for entry, _ in listed_instants(storage, new):
        if entry.path not in targets:  # a killed run's copy of an instant that has changed since
            storage.delete(entry.path)
    storage.makedirs(new.timeline_dir)
    listed = {e.path for e in storage.list(new.timeline_dir)}
    written = 0
    for m in moved:
        if m.target not in listed:
            storage.write_bytes(m.target, m.content)
            written += 1
            if written == 1:
                faults.pause_point("version_file_written")
    faults.pause_point("version_files_written")


def _remove_old_layout(storage: Storage, old: TableFormat, new: TableFormat) -> None:
    """Step 5: delete what readers of the new layout never read: the old layout's instant files that have their
    copy in the new timeline folder, and the old archive."""
    if old.layout == new.layout:
        return
    copied = {key_of(inst) for _, inst in listed_instants(storage, new)}
    removed = 0
    for entry, inst in listed_instants(storage, old):
        if key_of(inst) in copied:
            storage.delete(entry.path)
            removed += 1
            if removed == 1:
                faults.pause_point("version_old_file_deleted")
    if old.layout == 1:
        for entry in storage.list(old.archive_dir):
            if not entry.is_dir and entry.name.startswith(".commits_.archive"):
                storage.delete(entry.path)
    else:
        storage.delete_dir(old.timeline_dir)


def _finish_interrupted(storage: Storage, config: TableConfig) -> None:
    """Finish step 5 of a change a crash interrupted: a backup of another version than the table's names the
    layout whose files are leftovers. A backup of the table's own version is one written before a crash in
    step 4, and goes (the table kept its version)."""
    try:
        backup = TableConfig.parse(storage.read_bytes(PROPS_BACKUP_PATH), storage.full(PROPS_BACKUP_PATH))
    except FileNotFoundError:
        return
    except CorruptTableError:
        backup = config  # a garbled backup is no record of anything: it goes
    if backup.version != config.version:
        _remove_old_layout(storage, backup.format, config.format)
    storage.delete(PROPS_BACKUP_PATH)

