"""Helpers the tests share: read a table with hudi-rs, and compare row sets."""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
from hudi import HudiTableBuilder

REFERENCE_DIR = Path(__file__).resolve().parents[1].parent / "shared" / "reference-tables"

META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]


def hudi_rs(path: str, read_optimized: bool = False, as_of: str | None = None,
            storage_options: dict[str, str] | None = None) -> pa.Table:
    builder = HudiTableBuilder.from_base_uri(str(path))
    if storage_options:
        builder = builder.with_storage_options(storage_options)
    if read_optimized:
        builder = builder.with_hudi_option("hoodie.read.use.read_optimized.mode", "true")
    table = builder.build()
    if as_of is not None:
        from hudi import HudiReadOptions

        batches = table.read(HudiReadOptions().with_as_of_timestamp(as_of))
    else:
        batches = table.read()
    if not batches:
        return pa.table({})
    return pa.Table.from_batches(batches)


def rows(table: pa.Table, columns: Sequence[str]) -> list[tuple[Any, ...]]:
    """Sorted row tuples over `columns` (order-insensitive comparison of two reads)."""
    if table.num_rows == 0:
        return []
    data = table.select(list(columns)).to_pylist()
    return sorted((tuple(r[c] for c in columns) for r in data), key=repr)


def assert_same_rows(ours: pa.Table, theirs: pa.Table, columns: Sequence[str]) -> None:
    a, b = rows(ours, columns), rows(theirs, columns)
    assert a == b, f"row sets differ: ours has {len(a)}, theirs {len(b)}; first diff {_first_diff(a, b)}"


def _first_diff(a: list, b: list) -> Any:
    sa, sb = set(map(repr, a)), set(map(repr, b))
    return sorted(sa - sb)[:3], sorted(sb - sa)[:3]
