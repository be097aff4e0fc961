"""Markers: every data file of a write is announced under the instant's temp folder before it is written,
so a rollback can remove exactly what a failed instant wrote (direct markers, or Java's MARKERS<n> lists)."""

from __future__ import annotations

from hudi_ds.storage import Storage, require_inside
from hudi_ds.storage.layout import marker_path, temp_dir

MARKER_SEPARATOR = ".marker."


def write_marker(storage: Storage, instant: str, data_file: str, io_type: str) -> None:
    storage.write_bytes(marker_path(instant, data_file, io_type), b"")


def marked_files(storage: Storage, instant: str) -> list[str]:
    """Data files (relative paths) announced by the instant's markers; a marker naming a path outside the
    table raises CorruptTableError before anything acts on the list."""
    root = temp_dir(instant)
    out: list[str] = []
    for entry in storage.walk_files(root):
        rel = entry.path[len(root) + 1:]
        if MARKER_SEPARATOR in rel:
            out.append(require_inside(rel.rsplit(MARKER_SEPARATOR, 1)[0], entry.path))
        elif entry.name.startswith("MARKERS") and entry.name[7:].isdigit():
            for line in storage.read_bytes(entry.path).decode("utf-8", "replace").splitlines():
                if MARKER_SEPARATOR in line:
                    out.append(require_inside(line.strip().rsplit(MARKER_SEPARATOR, 1)[0], entry.path))
    return sorted(set(out))
