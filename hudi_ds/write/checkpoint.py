"""Exactly-once bookkeeping for streaming writers, in the commit metadata itself.

Each committed micro-batch records `{identifier: batchId}` under Hudi's own key
`_hudi_streaming_sink_checkpoint` (what Hudi's Spark streaming sink writes), so a replayed batch id is
recognised from the table alone — whatever happened to the query's checkpoint folder. The pending
instant of a batch also names its writer, so a restarted writer finds and rolls back its own leftovers
without touching other writers' instants.
"""

from __future__ import annotations

import json

from hudi_ds.timeline import COMMIT_ACTIONS, Timeline

SINK_CHECKPOINT_KEY = "_hudi_streaming_sink_checkpoint"
WRITER_KEY = "hudi_ds.streaming.writer"
BATCH_KEY = "hudi_ds.streaming.batch"


def checkpoint_metadata(identifier: str, batch_id: int) -> dict[str, str]:
    """Extra commit metadata of a streaming batch."""
    return {
        SINK_CHECKPOINT_KEY: json.dumps({identifier: str(batch_id)}),
        WRITER_KEY: identifier,
        BATCH_KEY: str(batch_id),
    }


def last_committed_batch(timeline: Timeline, identifier: str) -> int | None:
    """The newest batch id this writer committed, from the newest commit that carries one for it."""
    for inst in reversed(timeline.commits()):
        extra = timeline.commit_metadata(inst).extra_metadata or {}
        raw = extra.get(SINK_CHECKPOINT_KEY)
        if not raw:
            continue
        try:
            value = json.loads(raw).get(identifier)
        except (ValueError, AttributeError):
            continue
        if value is not None:
            try:
                return int(value)
            except ValueError:
                continue
    return None


def pending_instants_of(timeline: Timeline, identifier: str) -> list[tuple[str, int | None]]:
    """(instant, batch id) of this writer's pending writes: leftovers of a crash to roll back."""
    out = []
    for inst in timeline.pending():
        if inst.action not in COMMIT_ACTIONS:
            continue
        try:
            extra = timeline.commit_metadata(inst).extra_metadata or {}
        except Exception:  # noqa: BLE001 - an unreadable inflight file is not ours to judge here
            continue
        if extra.get(WRITER_KEY) == identifier:
            batch = extra.get(BATCH_KEY)
            out.append((inst.requested_time, int(batch) if batch and batch.isdigit() else None))
    return out
