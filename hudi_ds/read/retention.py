"""What cleaning kept: when a query reaching back into the table's history can still be answered.

Archiving only moves instants off the active timeline (their metadata stays readable in the archive); cleaning
deletes file versions. So a time-travel, incremental or change-feed query over old commits is answered from the
archived commits' metadata whenever the file versions it needs still exist, and fails with CleanedInstantsError
only when cleaning removed one of them. A file version is needed when it belongs to the state of a file group as
of the query's instant; the file-system view as of that instant must then hold every file the commits up to it
name (FileSystemView.check_committed_files). A missing one is cleaning's doing when the instant is older than the
earliest commit the newest clean retained; otherwise the table is damaged (MissingFileError).
"""

from __future__ import annotations

from hudi_ds.errors import CleanedInstantsError, HudiDsError, MissingFileError
from hudi_ds.files.view import FileSystemView, earliest_data_instant
from hudi_ds.timeline import Timeline

RETAIN_OPTION = "clean.retain_commits (Hudi's hoodie.cleaner.commits.retained, hoodie.clean.commits.retained)"


def earliest_retained(timeline: Timeline) -> str | None:
    """The earliest commit whose file versions the newest clean kept (None if never cleaned)."""
    cleans = [i for i in timeline.completed() if i.action == "clean"]
    if not cleans:
        return None
    try:
        meta = timeline.read_avro(cleans[-1])
    except HudiDsError:
        return None
    value = meta.get("earliestCommitToRetain")
    return str(value) if value else None


def reaches_history(timeline: Timeline, instant: str) -> bool:
    """Whether a query reaching back to `instant` needs the archived instants: `instant` is older than the
    active timeline, or than what cleaning retained (the check of retained files needs every commit's
    metadata up to the query's instant). A query of the latest commit reads neither the clean nor the archive."""
    latest = timeline.last_completed_commit()
    if latest is not None and instant >= latest.requested_time:
        return False
    first = earliest_data_instant(timeline)
    older = first is None or instant < first
    if not older:
        retained = earliest_retained(timeline)
        older = retained is not None and instant < retained
    return older and timeline.has_archived_instants()


def cleaned(what: str, retained: str, cause: str) -> CleanedInstantsError:
    return CleanedInstantsError(
        f"{what} is gone: cleaning kept the file versions of the commits from {retained} on ({cause}); read a "
        f"later range, or keep more history with {RETAIN_OPTION} on the writer")


def require_files(view: FileSystemView, what: str) -> dict[str, str]:
    """The files the view's commits name (path -> commit), after checking the view holds those it needs:
    CleanedInstantsError naming the retention option when cleaning removed one, MissingFileError otherwise."""
    committed = view.committed_paths()
    try:
        view.check_committed_files(committed)
    except MissingFileError as exc:
        as_of = view.visibility.as_of
        retained = earliest_retained(view.timeline)
        if retained is not None and as_of is not None and as_of < retained:
            raise cleaned(what, retained, "a file version it needs was removed") from exc
        raise
    return committed
