"""A table's format: every rule that depends on the table version, chosen once from the table's config.

Version 6 (Apache Hudi 0.14/0.15) keeps its instants in `.hoodie/` (timeline layout 1) with JSON commit metadata;
its log files are named after the base instant of their file slice and get a new version per write (APPEND
markers). Versions 8 (Hudi 1.0) and 9 (1.1, 1.2) keep the timeline in `.hoodie/<hoodie.timeline.path>` (layout
2), name completed instants `<requested>_<completion>.<action>`, write commit metadata as Avro, name each log
file after the delta commit that wrote it (CREATE markers; file slicing then goes by completion time), and archive
into the LSM history. Writers, services, Spark and the CLI ask this object; nothing else branches on a version.
A later version is one more entry in `_FORMATS`.
"""

from __future__ import annotations

import posixpath
from dataclasses import dataclass
from typing import TYPE_CHECKING

from hudi_ds.errors import UnsupportedTableError
from hudi_ds.storage.layout import HOODIE_DIR
from hudi_ds.timeline.avro_models import encode_avro_instant
from hudi_ds.timeline.avro_schemas import COMMIT_METADATA, REPLACE_COMMIT_METADATA
from hudi_ds.timeline.commit_metadata import CommitMetadata
from hudi_ds.timeline.timeline import Timeline, TimelineWriter

if TYPE_CHECKING:
    from hudi_ds.config.table_config import TableConfig
    from hudi_ds.storage import Storage

DEFAULT_WRITE_VERSION = 6  # every engine reads version 6; Hudi 1.x writes 9 (docs/compatibility.md)
WRITABLE_VERSIONS = (6, 8, 9)


@dataclass(frozen=True)
class TableFormat:
    """The version-dependent rules of one table (its version and its own timeline folders)."""

    version: int
    layout: int
    timeline_path: str = "timeline"  # hoodie.timeline.path (layout 2)
    history_path: str = "history"  # hoodie.timeline.history.path (layout 2)
    archive_path: str = "archived"  # hoodie.archivelog.folder (layout 1)

    @property
    def completion_times(self) -> bool:
        """Completed instants carry a completion time; readers slice files and order commits by it."""
        return self.layout >= 2

    @property
    def timeline_dir(self) -> str:
        if self.layout == 1:
            return HOODIE_DIR
        return f"{HOODIE_DIR}/{self.timeline_path.strip('/')}"

    @property
    def archive_dir(self) -> str:
        if self.layout == 1:
            return f"{HOODIE_DIR}/{self.archive_path.strip('/')}"
        return posixpath.join(self.timeline_dir, self.history_path.strip("/"))

    @property
    def log_marker(self) -> str:
        """The marker IO type of a log file: v6 writers may append to a log, v8+ writers always create one."""
        return "CREATE" if self.layout >= 2 else "APPEND"

    @property
    def logs_shared(self) -> bool:
        """Whether a log file may hold blocks of several instants (then a rollback masks it with a command
        block instead of deleting it)."""
        return self.layout == 1

    def log_instant(self, slice_instant: str, write_instant: str) -> str:
        """The instant a new log file is named after: its slice's base instant (v6) or its own write (v8+)."""
        return write_instant if self.layout >= 2 else slice_instant

    def load_timeline(self, storage: Storage) -> Timeline:
        return Timeline.load(storage, self.layout, self.timeline_path,
                             self.history_path if self.layout >= 2 else self.archive_path)

    def timeline_writer(self, storage: Storage) -> TimelineWriter:
        return TimelineWriter(storage, self.layout, self.timeline_dir)

    def encode_commit_metadata(self, meta: CommitMetadata, action: str) -> bytes:
        """Commit metadata of a commit-like instant file (inflight or completed): JSON (v6) or Avro (v8+)."""
        if self.layout == 1:
            return meta.to_json_bytes()
        replace = action in ("replacecommit", "clustering")
        schema = REPLACE_COMMIT_METADATA if replace else COMMIT_METADATA
        return encode_avro_instant(meta.to_avro_record(replace), schema)


_LAYOUTS = {6: 1, 8: 2, 9: 2}


def format_for(version: int, timeline_path: str = "timeline", history_path: str = "history",
               archive_path: str = "archived") -> TableFormat:
    """The format of a table version hudi_ds writes; UnsupportedTableError for any other."""
    layout = _LAYOUTS.get(version)
    if layout is None:
        raise UnsupportedTableError(
            f"table version {version} is not one hudi_ds writes ({', '.join(map(str, WRITABLE_VERSIONS))}); read "
            "it, or write it with an Apache Hudi release that knows it")
    return TableFormat(version, layout, timeline_path or "timeline", history_path or "history",
                       archive_path or "archived")


def table_format(config: TableConfig) -> TableFormat:
    """The format of an existing table, from its hoodie.properties."""
    raw = config.raw
    fmt = format_for(config.version, config.timeline_path, raw.get("hoodie.timeline.history.path", "history"),
                     raw.get("hoodie.archivelog.folder", "archived"))
    if config.layout_version != fmt.layout:
        raise UnsupportedTableError(
            f"hoodie.properties says table version {config.version} with timeline layout {config.layout_version}; "
            f"version {config.version} tables use layout {fmt.layout}. The file was edited by hand or damaged: "
            "restore it from .hoodie/hoodie.properties.backup")
    return fmt
