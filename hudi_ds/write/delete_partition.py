"""Apache Hudi's delete_partition operation: a replacecommit (operation type DELETE_PARTITION) that replaces every
file group of the partitions it names and writes no file (SparkDeletePartitionCommitActionExecutor). The partitions
are those of hoodie.datasource.write.partitions.to.delete, whose `*` (or `%2A`, as Spark SQL may encode it) matches
any characters and whose paths the table does not have are skipped; without that option, those of the rows written
(HoodieSparkSqlWriter). Readers then see no row of them; the metadata table drops them from its partition list; a
clean deletes their files once the commit is past retention, as for any replaced file group."""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence

from hudi_ds.errors import InstantStateError
from hudi_ds.files.compaction_plan import pending_compactions, read_plan
from hudi_ds.timeline.timeline import Timeline

_WILDCARD = re.compile(r"\*|%2A")


def requested(option: str | None) -> tuple[str, ...] | None:
    """The comma-separated paths of hoodie.datasource.write.partitions.to.delete (None when unset)."""
    if option is None:
        return None
    return tuple(p.strip() for p in option.split(",") if p.strip())


def resolve(named: Sequence[str] | None, of_rows: Iterable[str], existing: Iterable[str]) -> list[str]:
    """The partitions a delete_partition replaces: those `named` (wildcards matched against `existing`, paths the
    table lacks skipped), else the rows' partitions; only the ones holding file groups (`existing`)."""
    have = set(existing)
    if named is None:
        return sorted(have.intersection(of_rows))
    out: set[str] = set()
    for pattern in named:
        if _WILDCARD.search(pattern):
            regex = re.compile(".*".join(re.escape(part) for part in _WILDCARD.split(pattern)))
            out.update(p for p in have if regex.fullmatch(p))
        elif pattern in have:
            out.add(pattern)
    return sorted(out)


def check_no_pending_compaction(timeline: Timeline, partitions: Sequence[str]) -> None:
    """Refuse while a compaction plan covers a partition being deleted: once both completed, two instants would
    have replaced one file group (Hudi's checkPreconditions refuses the same)."""
    dropping = set(partitions)
    offending = sorted({inst.requested_time for inst in pending_compactions(timeline)
                        if any(op.partition in dropping for op in read_plan(timeline, inst))})
    if offending:
        raise InstantStateError(
            f"cannot delete partitions {sorted(dropping)[:5]}: the pending compaction(s) {offending} cover them; "
            "run them first (HudiTable.run_compaction()), then delete the partitions")
