"""The change feed (CDC): per commit, the inserts, updates (pre- and post-image) and deletes it made.

Each commit in (start, end] is compared with the commit before it on the file groups it touched:
both states come from the ordinary merged read, so the feed agrees with snapshots by construction.
Compaction and clustering commits change no record and yield no rows.
"""

from __future__ import annotations

from collections.abc import Iterator

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.files.view import Visibility
from hudi_ds.read.query import TableSnapshot, commits_between
from hudi_ds.schema.meta import META_COLUMNS
from hudi_ds.timeline import Instant

CHANGE_TYPE = "_change_type"
COMMIT_TIME = "_commit_time"
KEY = "_hoodie_record_key"
PARTITION = "_hoodie_partition_path"
NO_DATA_OPERATIONS = {"COMPACT", "CLUSTER", "LOG_COMPACT"}


def change_schema(snap: TableSnapshot) -> pa.Schema:
    data = [f for f in snap.full_schema() if f.name not in META_COLUMNS]
    return pa.schema([pa.field(KEY, pa.string()), pa.field(PARTITION, pa.string()), *data,
                      pa.field(CHANGE_TYPE, pa.string()), pa.field(COMMIT_TIME, pa.string())])


def _groups_touched(snap: TableSnapshot, inst: Instant) -> set[tuple[str, str]]:
    meta = snap.timeline.commit_metadata(inst)
    groups = {(s.partition_path or "", s.file_id) for s in meta.write_stats() if s.file_id}
    for partition, ids in (meta.partition_to_replace_file_ids or {}).items():
        groups.update((partition, fid) for fid in ids)
    return groups


def _state(snap: TableSnapshot, as_of: str | None, groups: set[tuple[str, str]], schema: pa.Schema) -> pa.Table:
    """Merged rows of the given file groups as of a commit (empty before the first commit)."""
    if as_of is None:
        return schema.empty_table()
    vis = Visibility.of(snap.timeline, as_of, snap.config.layout_version)
    view = snap.view(vis)
    reader = snap.reader(vis, schema)
    tables = [reader.read(sl, snap.config.is_mor) for sl in view.slices_in(sorted(groups))]
    tables = [t for t in tables if t.num_rows]
    return pa.concat_tables(tables) if tables else schema.empty_table()


def _ident(t: pa.Table) -> pa.Array:
    joined = pc.binary_join_element_wise(pc.fill_null(t[PARTITION], ""), pc.fill_null(t[KEY], ""), "\x00")
    return joined.combine_chunks() if isinstance(joined, pa.ChunkedArray) else joined


def _tag(t: pa.Table, kind: str, commit: str, out: pa.Schema) -> pa.Table:
    n = t.num_rows
    cols = [t[f.name] if f.name in t.column_names else pa.nulls(n, f.type) for f in out
            if f.name not in (CHANGE_TYPE, COMMIT_TIME)]
    cols += [pa.array([kind] * n, pa.string()), pa.array([commit] * n, pa.string())]
    return pa.Table.from_arrays(cols, schema=out)


def _commit_changes(before: pa.Table, after: pa.Table, commit: str, out: pa.Schema) -> pa.Table:
    b_id, a_id = _ident(before), _ident(after)
    in_before = pc.is_in(a_id, value_set=b_id)
    in_after = pc.is_in(b_id, value_set=a_id)
    changed_now = pc.equal(after["_hoodie_commit_time"], commit)
    inserts = after.filter(pc.invert(in_before))
    deletes = before.filter(pc.invert(in_after))
    post = after.filter(pc.and_(in_before, changed_now))
    pre = before.filter(pc.is_in(b_id, value_set=_ident(post)))
    parts = [_tag(pre, "update_preimage", commit, out), _tag(post, "update_postimage", commit, out),
             _tag(inserts, "insert", commit, out), _tag(deletes, "delete", commit, out)]
    return pa.concat_tables(parts)


def touched_groups(snap: TableSnapshot, commits: list[str]) -> set[tuple[str, str]]:
    by_time = {c.requested_time: c for c in snap.timeline.commits()}
    out: set[tuple[str, str]] = set()
    for ts in commits:
        if ts in by_time:
            out |= _groups_touched(snap, by_time[ts])
    return out


def previous_commit(snap: TableSnapshot, ts: str) -> str | None:
    order = [c.requested_time for c in snap.timeline.commits()]
    pos = order.index(ts)
    return order[pos - 1] if pos > 0 else None


def commit_changes(snap: TableSnapshot, ts: str, groups: set[tuple[str, str]] | None = None) -> pa.Table:
    """The change rows of one commit (optionally only for some of its file groups)."""
    inst = next(c for c in snap.timeline.commits() if c.requested_time == ts)
    out = change_schema(snap)
    if snap.timeline.commit_metadata(inst).operation_type in NO_DATA_OPERATIONS:
        return out.empty_table()
    schema = snap.full_schema()
    groups = _groups_touched(snap, inst) if groups is None else groups
    prev = previous_commit(snap, ts)
    return _commit_changes(_state(snap, prev, groups, schema), _state(snap, ts, groups, schema), ts, out)


def iter_changes(snap: TableSnapshot, start: str, end: str | None = None) -> Iterator[pa.Table]:
    """One table of change rows per commit in (start, end], in commit order."""
    for ts in commits_between(snap, start, end):
        yield commit_changes(snap, ts)


def changes(snap: TableSnapshot, start: str, end: str | None = None) -> pa.Table:
    tables = list(iter_changes(snap, start, end))
    return pa.concat_tables(tables) if tables else change_schema(snap).empty_table()
