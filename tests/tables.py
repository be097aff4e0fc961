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


def instant_file(table: Any, requested_time: str, action: str, state: str = "completed") -> Path:
    """The timeline file of an instant of a hudi_ds table in either layout (`<ts>.<action>` on v6,
    `<ts>_<completion>.<action>` completed on v8/v9; pending files `<ts>.<action>.<state>`)."""
    folder = Path(table.path) / table.config.format.timeline_dir
    if state != "completed":
        return folder / f"{requested_time}.{action}.{state}"
    found = [p for p in folder.glob(f"{requested_time}*.{action}")
             if p.name == f"{requested_time}.{action}" or p.name.startswith(f"{requested_time}_")]
    assert len(found) == 1, f"completed {requested_time}.{action}: {found}"
    return found[0]


def commit_metadata(table: Any, requested_time: str, action: str) -> dict[str, Any]:
    """The commit metadata of a completed commit-like instant as a dict: JSON (v6) or Avro (v8/v9)."""
    import json

    import fastavro

    path = instant_file(table, requested_time, action)
    data = path.read_bytes()
    if data.startswith(b"Obj\x01"):
        with open(path, "rb") as f:
            return next(iter(fastavro.reader(f)))  # type: ignore[return-value]
    return json.loads(data)
