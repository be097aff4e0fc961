"""Every case of ../shared/reference-tables/EXPECTED.json, read in place with HudiTable, and our
snapshot / read-optimized rows against hudi-rs on every reference table."""

from __future__ import annotations

import json
from datetime import date, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from tables import REFERENCE_DIR, hudi_rs, rows

from hudi_ds import HudiTable

COMMIT_ACTIONS = ("commit", "deltacommit", "replacecommit")


def _cases() -> list[dict[str, Any]]:
    path = REFERENCE_DIR / "EXPECTED.json"
    return json.loads(path.read_text()) if path.exists() else []


def _tables() -> list[str]:
    if not REFERENCE_DIR.is_dir():
        return []
    return sorted(p.name for p in REFERENCE_DIR.iterdir() if p.is_dir())


def _case_id(case: dict[str, Any]) -> str:
    return f"{case['table']}-{case['kind']}-{json.dumps(case['params'], sort_keys=True)}"


def _instant(table: HudiTable, ref: str) -> str:
    """Resolve `c<N>` / `first_commit_action` / a literal instant time (see CATALOG.md)."""
    commits = sorted((i for i in table.timeline() if i.is_completed and i.action in COMMIT_ACTIONS),
                     key=lambda i: i.requested_time)
    if ref == "first_commit_action":
        return next(i.requested_time for i in commits if i.action == "commit")
    if ref.startswith("c") and ref[1:].isdigit():
        inst = commits[int(ref[1:])]
        return inst.completion_time if table.config.layout_version >= 2 and inst.completion_time \
            else inst.requested_time
    return ref


def _asof_instant(table: HudiTable, ref: str) -> str:
    commits = sorted((i for i in table.timeline() if i.is_completed and i.action in COMMIT_ACTIONS),
                     key=lambda i: i.requested_time)
    if ref == "first_commit_action":
        return next(i.requested_time for i in commits if i.action == "commit")
    if ref.startswith("c") and ref[1:].isdigit():
        return commits[int(ref[1:])].requested_time
    return ref


def _plain(v: Any) -> Any:
    if isinstance(v, Decimal):
        return str(v)
    if isinstance(v, (date, datetime)):
        return v.isoformat()
    if isinstance(v, bytes):
        return v.hex()
    return v


def _where(t: pa.Table, params: dict[str, Any]) -> pa.Table:
    if "where" in params:
        col, value = params["where"]
        t = t.filter(pa.compute.equal(t[col], value))
    if "where_in" in params:
        col, values = params["where_in"]
        t = t.filter(pa.compute.is_in(t[col], value_set=pa.array(values)))
    return t


@pytest.mark.parametrize("case", _cases(), ids=_case_id)
def test_expected_case(reference_dir: Path, case: dict[str, Any]) -> None:
    table = HudiTable(str(reference_dir / case["table"]))
    kind, params = case["kind"], case["params"]
    if kind == "snapshot":
        got = table.to_arrow()
    elif kind == "ro":
        got = table.to_arrow(read_optimized=True)
    elif kind == "filter":
        got = table.to_arrow(filters=[tuple(f) for f in params["filters"]])
    elif kind == "ro_filter":
        got = table.to_arrow(filters=[tuple(f) for f in params["filters"]], read_optimized=True)
    elif kind == "asof":
        got = table.to_arrow(as_of=_asof_instant(table, params["at"]))
    elif kind == "incr":
        start = params["start"] if params["start"] in ("0",) else _instant(table, params["start"])
        end = _instant(table, params["end"]) if "end" in params else None
        got = table.incremental(start, end)
    else:
        pytest.fail(f"unknown case kind {kind}")
    got = _where(got, params)
    expected = case["expected"]
    if isinstance(expected, dict) and "num_rows" in expected:
        assert got.num_rows == expected["num_rows"]
    elif isinstance(expected, dict) and "absent" in expected:
        for col, values in expected["absent"].items():
            assert not set(got[col].to_pylist()) & set(values)
    else:
        cols = case["cols"]
        ours = [tuple(_plain(v) for v in r) for r in rows(got, cols)]
        want = sorted((tuple(r) for r in expected), key=repr)
        assert sorted(ours, key=repr) == want


@pytest.mark.interop
@pytest.mark.parametrize("name", _tables())
@pytest.mark.parametrize("read_optimized", [False, True], ids=["snapshot", "ro"])
def test_same_rows_as_hudi_rs(reference_dir: Path, name: str, read_optimized: bool) -> None:
    table = HudiTable(str(reference_dir / name))
    ours = table.to_arrow(read_optimized=read_optimized)
    theirs = hudi_rs(str(reference_dir / name), read_optimized=read_optimized)
    assert ours.num_rows == theirs.num_rows
    if ours.num_rows == 0:
        return
    cols = [c for c in ours.column_names if c in theirs.column_names and c != "_hoodie_file_name"
            and not pa.types.is_nested(ours.schema.field(c).type)]
    plain = lambda t: sorted((tuple(_plain(v) for v in r) for r in rows(t, cols)), key=repr)  # noqa: E731
    assert plain(ours) == plain(theirs)
