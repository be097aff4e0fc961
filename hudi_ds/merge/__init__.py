"""Merging a file slice (base file + log blocks) into the latest image of each record."""

from hudi_ds.merge.slice_merge import LogDeletes, LogVersions, MergeCounts, merge_slice, merge_slice_counted

__all__ = ["LogDeletes", "LogVersions", "MergeCounts", "merge_slice", "merge_slice_counted"]
