"""Polars LazyFrames over a table's queries (`HudiTable.scan*`), through polars' IO-plugin API.

Polars hands the source the columns a query needs, its predicate and its row limit. The columns become the read
plan's columns (the meta columns and those no one asks for are never decoded); the predicate's simple conjuncts
(`col <op> constant`, `is_in`, `is_between`, joined by `&`) become filters of the one filter model
(hudi_ds.read.filters), which prune partitions and skip row groups; the whole predicate is then applied by polars
itself, so what the translation leaves out only costs speed. The limit stops the reading once it is met.

Filters on floating-point columns are not translated: polars orders NaN above every number, Arrow's comparisons
never hold for NaN, and a filter must never drop a row the predicate keeps.
"""

from __future__ import annotations

import contextlib
import json
from collections.abc import Callable, Generator, Sequence
from typing import Any

import polars as pl
import pyarrow as pa
from polars.io.plugins import register_io_source

from hudi_ds.errors import ConfigError
from hudi_ds.read import filters as flt

# polars' names of comparison operators, in its serialized expressions
_COMPARISONS = {"Eq": "=", "NotEq": "!=", "Lt": "<", "LtEq": "<=", "Gt": ">", "GtEq": ">="}
_FLIPPED = {"=": "=", "!=": "!=", "<": ">", "<=": ">=", ">": "<", ">=": "<="}

# the batches of one query: given the filters and the columns to read, tables of those columns
Batches = Callable[[list[flt.Filter], list[str]], Generator[pa.Table, None, None]]


def _node(expr: pl.Expr) -> dict[str, Any]:
    """The root of an expression's serialized tree (empty when polars cannot serialize it)."""
    try:
        node = json.loads(expr.meta.serialize(format="json"))
    except Exception:  # noqa: BLE001 - an expression polars cannot serialize is simply not translated
        return {}
    return node if isinstance(node, dict) else {}


def _column(node: Any) -> str | None:
    return node["Column"] if isinstance(node, dict) and isinstance(node.get("Column"), str) else None


def _constant(exprs: Sequence[pl.Expr]) -> list[pl.Series]:
    """The values of the inputs that read no column."""
    out = []
    for e in exprs:
        if e.meta.root_names():
            continue
        try:
            out.append(pl.select(e).to_series())
        except Exception:  # noqa: BLE001 - not a constant polars can evaluate alone
            return []
    return out


def _members(values: pl.Series) -> list[Any]:
    return (values.explode() if isinstance(values.dtype, pl.List) else values).to_list()


def _boolean_function(node: dict[str, Any]) -> tuple[Any, list[Any]]:
    """The kind of a boolean function node (`"Not"`, `{"IsIn": ...}`, ...) and its serialized inputs."""
    function = node.get("Function")
    if not isinstance(function, dict) or not isinstance(function.get("function"), dict):
        return None, []
    return function["function"].get("Boolean"), function.get("input") or []


def _membership(expr: pl.Expr, node: dict[str, Any]) -> flt.Filter | None:
    """`col.is_in(constants)` as an `in` filter."""
    kind, arguments = _boolean_function(node)
    name = _column(arguments[0]) if arguments else None
    if name is None or not isinstance(kind, dict) or "IsIn" not in kind:
        return None
    values = _constant(expr.meta.pop())
    if len(values) != 1:
        return None
    members = _members(values[0])
    if None in members and (kind["IsIn"] or {}).get("nulls_equal"):
        return None  # a null row matches: no filter of ours keeps null rows for `in`
    return name, "in", [m for m in members if m is not None]


def _conjunct_filters(expr: pl.Expr) -> list[flt.Filter]:
    node = _node(expr)
    if "BinaryExpr" in node:
        binary = node["BinaryExpr"]
        inputs = expr.meta.pop()
        if binary.get("op") in ("And", "LogicalAnd"):
            return [f for child in inputs for f in _conjunct_filters(child)]
        op = _COMPARISONS.get(binary.get("op", ""))
        values = _constant(inputs)
        if op is None or len(values) != 1 or len(values[0]) != 1:
            return []
        if (name := _column(binary.get("left"))) is not None:
            return [(name, op, values[0][0])]
        if (name := _column(binary.get("right"))) is not None:
            return [(name, _FLIPPED[op], values[0][0])]
        return []
    kind, arguments = _boolean_function(node)
    if kind == "Not":
        inner = expr.meta.pop()[0]
        member = _membership(inner, _node(inner))
        return [] if member is None else [(member[0], "not in", member[2])]
    if isinstance(kind, dict) and "IsIn" in kind:
        member = _membership(expr, node)
        return [] if member is None else [member]
    name = _column(arguments[0]) if arguments else None
    if name is not None and isinstance(kind, dict) and "IsBetween" in kind:
        values = _constant(expr.meta.pop())
        if len(values) != 2 or any(len(v) != 1 for v in values):
            return []
        try:
            low, high = sorted(v[0] for v in values)  # bounds given the wrong way round select nothing anyway
        except TypeError:
            return []
        return [(name, ">=", low), (name, "<=", high)]
    return []


def predicate_filters(predicate: pl.Expr, schema: pa.Schema) -> list[flt.Filter]:
    """The conjuncts of a polars predicate that our filters can test, each keeping every row polars keeps."""
    out = []
    for f in _conjunct_filters(predicate):
        col, op, value = f
        if col not in schema.names or pa.types.is_floating(schema.field(col).type) or value is None:
            continue
        try:
            normalized = flt.normalize([f], schema)
            flt.expression(normalized, schema)  # the value must fit the column's type
        except ConfigError:
            continue
        out += normalized
    return out


def output_schema(schema: pa.Schema, columns: Sequence[str] | None) -> pa.Schema:
    """`schema` restricted to `columns` (the user's `columns=`), in the user's order."""
    if columns is None:
        return schema
    missing = [c for c in columns if c not in schema.names]
    if missing:
        raise ConfigError(f"columns {missing} are not in the table; columns are {', '.join(schema.names)}")
    return pa.schema([schema.field(c) for c in columns], metadata=schema.metadata)


def lazy_frame(schema: pa.Schema, batches: Batches) -> pl.LazyFrame:
    """A LazyFrame of `schema` whose rows `batches` reads when polars collects it."""
    polars_schema = pl.from_arrow(schema.empty_table()).schema  # type: ignore[union-attr]

    def source(with_columns: list[str] | None, predicate: pl.Expr | None, n_rows: int | None,
               batch_size: int | None) -> Generator[pl.DataFrame, None, None]:
        wanted = list(with_columns) if with_columns is not None else schema.names
        needed = set(wanted) | set(predicate.meta.root_names() if predicate is not None else [])
        pushed = predicate_filters(predicate, schema) if predicate is not None else []
        left = n_rows
        produced = False
        # a count reads one column at least: a table of no columns has no rows either
        read = [c for c in schema.names if c in needed] or schema.names[:1]
        with contextlib.closing(batches(pushed, read)) as tables:
            for table in tables:  # leaving early closes the reading (hudi_ds.read.lazy)
                frame = pl.from_arrow(table, rechunk=False)
                assert isinstance(frame, pl.DataFrame)
                if predicate is not None:
                    frame = frame.filter(predicate)
                frame = frame.select(wanted)
                if left is not None:
                    frame = frame.head(left)
                    left -= frame.height
                if frame.height:
                    produced = True
                    yield from frame.iter_slices(batch_size) if batch_size else [frame]
                if left == 0:
                    return
        if not produced:
            yield pl.DataFrame(schema=polars_schema).select(wanted)

    return register_io_source(source, schema=polars_schema)
