"""Whether the metadata table's timeline is in step with the data table's, instant by instant (what `hudi-py
validate` reports besides comparing the listing with storage).

Every data instant that changes files (commit, deltacommit, replacecommit, a compaction's commit, clean) and
completed after the metadata table's bootstrap must have a completed deltacommit of the same instant time, unless
a compaction of the metadata table folded it into its base file already (its instant may then be archived).
A deltacommit whose data instant did not complete is ignored by readers (a writer killed between the two commits;
the next write rolls it back): a warning, as is a compaction or clean of the metadata table left pending.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from hudi_ds.metadata.layout import MetadataTable, is_init_instant
from hudi_ds.metadata.listing import compacted_before, is_folded
from hudi_ds.timeline import Timeline

SYNCED_ACTIONS = ("commit", "deltacommit", "replacecommit", "clean")  # data actions with a deltacommit each


@dataclass
class Differences:
    """Errors (a reader of the metadata table misses what the data timeline committed) and warnings."""

    errors: list[str] = field(default_factory=list)
    warnings: list[str] = field(default_factory=list)
    synced_to: str | None = None  # the latest data instant the metadata table has a completed deltacommit of


def timeline_differences(mdt: MetadataTable, data_timeline: Timeline) -> Differences:
    """Every difference between the metadata table's timeline and the data timeline (active instants)."""
    out = Differences()
    mdt_timeline = mdt.timeline()
    inits = [i.completion_time or "" for i in mdt_timeline.completed() if is_init_instant(i.requested_time)]
    folded = compacted_before(mdt_timeline)
    if not inits and not folded:
        out.errors.append("the metadata table has neither a completed bootstrap nor a compaction: readers find no "
                          "listing")
        return out
    bootstrapped = min(inits, default="")  # archived after a compaction: that compaction covers what it held
    for inst in data_timeline.completed():
        if inst.action not in SYNCED_ACTIONS or (inst.completion_time or "") <= bootstrapped:
            continue
        mine = mdt_timeline.find(inst.requested_time)
        if mine is not None and mine.action == "deltacommit" and mine.is_completed:
            out.synced_to = max(out.synced_to or "", inst.requested_time)
        elif mine is None and (inst.completion_time or "") < folded:
            continue  # folded into the metadata table's base file, its deltacommit archived
        else:
            state = "missing" if mine is None else f"{mine.action} {mine.state.name.lower()}"
            out.errors.append(f"data instant {inst.requested_time} ({inst.action}) completed, but the metadata "
                              f"table's deltacommit of it is {state}: readers of the metadata table miss its files")
    for mine in mdt_timeline.instants:
        if mine.action == "deltacommit" and not is_init_instant(mine.requested_time) and not is_folded(mine, folded):
            data = data_timeline.find(mine.requested_time)
            if data is None or not data.is_completed:
                how = "is not on the data timeline" if data is None else "is pending"
                out.warnings.append(
                    f"the metadata table's deltacommit {mine.requested_time} is ahead: its data instant {how} "
                    "(readers ignore it; the next write rolls it back)")
        elif mine.action in ("compaction", "clean") and not mine.is_completed:
            out.warnings.append(f"the metadata table's {mine.action} {mine.requested_time} is pending (a killed "
                                "writer's; the next write undoes it)")
    return out
