"""Merging a file slice (base file + log blocks) into the latest image of each record."""

from hudi_ds.merge.slice_merge import LogDeletes, LogVersions, merge_slice

__all__ = ["LogDeletes", "LogVersions", "merge_slice"]
