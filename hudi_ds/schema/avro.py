"""Arrow <-> Avro schema conversion with Hudi/Spark conventions (spec §5.3).

Hudi stores every schema as Avro JSON (commit metadata, log block headers, parquet footers) while hudi_ds
works in Arrow, so both directions must agree with what Spark writes: nullable unions `["null", T]` with
default null, record name `<table>_record` in namespace `hoodie.<table>`, decimals as named `fixed` types.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

import pyarrow as pa

from hudi_ds.errors import InvalidDataError, SchemaError

_AVRO_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}
_TS_UNITS = {"millis": "ms", "micros": "us", "nanos": "ns"}
# Logical types whose wire value is a plain int/long that Arrow accepts as-is for the matching temporal type.
_WIRE_LOGICAL = {
    "date", "time-millis", "time-micros", "timestamp-millis", "timestamp-micros", "timestamp-nanos",
    "local-timestamp-millis", "local-timestamp-micros", "local-timestamp-nanos", "uuid",
}
SUPPORTED_ARROW_TYPES = (
    "string, large_string, bool, int8, int16, int32, int64, uint8, uint16, uint32, float32, float64, "
    "binary, large_binary, date32, date64, time32, time64, timestamp (any unit, with or without tz), "
    "decimal128, list, large_list, struct, map<string, _>"
)


def sanitize_name(name: str) -> str:
    """Hudi's HoodieAvroUtils.sanitizeName: invalid characters become `__` (table names -> Avro names)."""
    if not name:
        return name
    if not re.match(r"[A-Za-z_]", name[0]):
        name = "__" + name[1:]
    return re.sub(r"[^A-Za-z0-9_]", "__", name)


def record_name_and_namespace(table_name: str) -> tuple[str, str]:
    """(`<table>_record`, `hoodie.<table>`) as Spark names a table's top-level Avro record."""
    clean = sanitize_name(table_name)
    return f"{clean}_record", f"hoodie.{clean}"


def decimal_fixed_size(precision: int) -> int:
    """Smallest byte count whose signed range holds `precision` digits (Spark's minBytesForPrecision)."""
    size = 1
    while 2 ** (8 * size - 1) < 10**precision:
        size += 1
    return size


# ---------------------------------------------------------------------------------------------- Arrow -> Avro


def arrow_to_avro(schema: pa.Schema, table_name: str) -> dict[str, Any]:
    """Avro record schema for `schema`; every field a nullable union with default null, like Spark writes.

    timestamp[ns] maps to timestamp-micros (Avro 1.10/Hudi have no nanos): values lose sub-microsecond digits.
    """
    name, namespace = record_name_and_namespace(table_name)
    used: set[str] = {f"{namespace}.{name}"}
    fields = [_avro_field(f, f"{namespace}.{name}", used, f.name) for f in schema]
    return {"type": "record", "name": name, "namespace": namespace, "fields": fields}


def _avro_field(field: pa.Field, parent: str, used: set[str], column: str) -> dict[str, Any]:
    if not _AVRO_NAME.match(field.name):
        raise SchemaError(
            f"column {column!r}: name is not a valid Avro name ([A-Za-z_][A-Za-z0-9_]*); Hudi readers (Java, "
            "hudi-rs) cannot read such a table; rename the column"
        )
    return {"name": field.name, "type": ["null", _avro_type(field.type, field.name, parent, used, column)],
            "default": None}


def _unique(fullname: str, used: set[str]) -> str:
    candidate, n = fullname, 0
    while candidate in used:
        n += 1
        candidate = f"{fullname}_{n}"
    used.add(candidate)
    return candidate


def _split(fullname: str) -> dict[str, str]:
    namespace, _, name = fullname.rpartition(".")
    return {"name": name, "namespace": namespace}


def _avro_type(t: pa.DataType, fname: str, parent: str, used: set[str], column: str) -> Any:
    pt = pa.types
    if pt.is_string(t) or pt.is_large_string(t):
        return "string"
    if pt.is_boolean(t):
        return "boolean"
    if pt.is_int8(t) or pt.is_int16(t) or pt.is_int32(t) or pt.is_uint8(t) or pt.is_uint16(t):
        return "int"
    if pt.is_int64(t) or pt.is_uint32(t):
        return "long"
    if pt.is_float32(t):
        return "float"
    if pt.is_float64(t):
        return "double"
    if pt.is_binary(t) or pt.is_large_binary(t):
        return "bytes"
    if pt.is_date32(t) or pt.is_date64(t):
        return {"type": "int", "logicalType": "date"}
    if pt.is_time32(t):
        return {"type": "int", "logicalType": "time-millis"}
    if pt.is_time64(t):
        return {"type": "long", "logicalType": "time-micros"}
    if pt.is_timestamp(t):
        unit = "millis" if t.unit in ("s", "ms") else "micros"
        return {"type": "long", "logicalType": f"timestamp-{unit}" if t.tz else f"local-timestamp-{unit}"}
    if pt.is_decimal128(t):
        full = _unique(f"{parent}.{fname}.fixed", used)
        return {"type": "fixed", **_split(full), "size": decimal_fixed_size(t.precision),
                "logicalType": "decimal", "precision": t.precision, "scale": t.scale}
    if pt.is_list(t) or pt.is_large_list(t):
        return {"type": "array", "items": ["null", _avro_type(t.value_type, fname, parent, used, column)]}
    if pt.is_map(t):
        if not (pt.is_string(t.key_type) or pt.is_large_string(t.key_type)):
            raise SchemaError(f"column {column!r}: Avro maps need string keys, got {t.key_type}")
        return {"type": "map", "values": ["null", _avro_type(t.item_type, fname, parent, used, column)]}
    if pt.is_struct(t):
        full = _unique(f"{parent}.{fname}", used)
        children = [t.field(i) for i in range(t.num_fields)]
        fields = [_avro_field(f, full, used, f"{column}.{f.name}") for f in children]
        return {"type": "record", **_split(full), "fields": fields}
    raise SchemaError(
        f"column {column!r}: Arrow type {t} cannot be stored in Hudi; supported: {SUPPORTED_ARROW_TYPES}")


# ---------------------------------------------------------------------------------------------- Avro -> Arrow


def parse_avro_json(avro: dict[str, Any] | str) -> dict[str, Any]:
    """The schema as a dict; a str is parsed as JSON (SchemaError when it is not a JSON object)."""
    if isinstance(avro, dict):
        return avro
    try:
        parsed = json.loads(avro)
    except (TypeError, ValueError) as exc:
        raise SchemaError(f"invalid Avro schema JSON: {exc}") from exc
    if not isinstance(parsed, dict):
        raise SchemaError("an Avro record schema must be a JSON object")
    return parsed


def avro_to_arrow(avro: dict[str, Any] | str) -> pa.Schema:
    """Arrow schema of an Avro record schema (ours or Hudi/Spark/Flink's); unions with null -> nullable."""
    node = parse_avro_json(avro)
    conv = _AvroToArrow()
    if node.get("type") != "record":
        raise SchemaError(f"expected an Avro record schema, got type {node.get('type')!r}")
    return pa.schema(conv.record(node, "")[1])


class _AvroToArrow:
    """Walks an Avro schema, remembering named types (record/enum/fixed) so later references resolve."""

    def __init__(self) -> None:
        self.named: dict[str, pa.DataType | None] = {}  # fullname -> arrow type (None while being built)

    def record(self, node: dict[str, Any], namespace: str) -> tuple[str, list[pa.Field]]:
        """(full name, Arrow fields) of a record node."""
        fullname = self._register(node, namespace)
        ns = fullname.rpartition(".")[0]
        out = []
        for f in node.get("fields", []):
            if not isinstance(f, dict) or "name" not in f or "type" not in f:
                raise SchemaError(f"invalid Avro field in record {fullname!r}: {f!r}")
            typ, nullable = self.convert(f["type"], ns)
            out.append(pa.field(f["name"], typ, nullable=nullable))
        return fullname, out

    def _register(self, node: dict[str, Any], namespace: str) -> str:
        name = node.get("name")
        if not isinstance(name, str) or not name:
            raise SchemaError(f"named Avro type without a name: {node!r}")
        ns = node.get("namespace", namespace) or ""
        full = name if "." in name else (f"{ns}.{name}" if ns else name)
        self.named[full] = None
        return full

    def _lookup(self, ref: str, namespace: str) -> pa.DataType:
        for key in (f"{namespace}.{ref}" if namespace else ref, ref):
            if key in self.named:
                found = self.named[key]
                if found is None:
                    raise SchemaError(f"recursive Avro type {ref!r} has no Arrow equivalent")
                return found
        matches = [v for k, v in self.named.items() if k.rpartition(".")[2] == ref and v is not None]
        if len(matches) == 1:
            return matches[0]
        raise SchemaError(f"unknown Avro type {ref!r}")

    def convert(self, node: Any, namespace: str) -> tuple[pa.DataType, bool]:
        """(arrow type, nullable) of an Avro type node."""
        if isinstance(node, list):
            branches = [b for b in node
                        if b != "null" and not (isinstance(b, dict) and b.get("type") == "null")]
            if not branches:
                return pa.null(), True
            if len(branches) > 1:
                raise SchemaError(f"Avro union {node!r} has several non-null branches; not supported")
            typ, _ = self.convert(branches[0], namespace)
            return typ, len(branches) < len(node)
        if isinstance(node, str):
            if node in _PRIMITIVES:
                return _primitive(node), node == "null"
            return self._lookup(node, namespace), False
        if isinstance(node, dict):
            return self._complex(node, namespace), False
        raise SchemaError(f"invalid Avro type {node!r}")

    def _complex(self, node: dict[str, Any], namespace: str) -> pa.DataType:
        typ = node.get("type")
        if isinstance(typ, (dict, list)):  # {"type": {...}} wrapping, seen in some hand-written schemas
            return self.convert(typ, namespace)[0]
        logical = _logical(node)
        if logical is not None:
            if typ in ("fixed", "enum"):
                self.named[self._register(node, namespace)] = logical
            return logical
        if typ == "record":
            fullname, fields = self.record(node, namespace)
            result: pa.DataType = pa.struct(fields)
            self.named[fullname] = result
            return result
        if typ in ("enum", "fixed"):
            result = pa.string() if typ == "enum" else pa.binary()
            self.named[self._register(node, namespace)] = result
            return result
        if typ == "array":
            item, nullable = self.convert(node.get("items"), namespace)
            return pa.list_(pa.field("item", item, nullable=nullable))
        if typ == "map":
            value, nullable = self.convert(node.get("values"), namespace)
            return pa.map_(pa.string(), pa.field("value", value, nullable=nullable))
        if isinstance(typ, str) and typ in _PRIMITIVES:
            return _primitive(typ)
        if isinstance(typ, str):
            return self._lookup(typ, namespace)
        raise SchemaError(f"invalid Avro type {node!r}")


def _primitive(name: str) -> pa.DataType:
    return {
        "null": pa.null(), "boolean": pa.bool_(), "int": pa.int32(), "long": pa.int64(),
        "float": pa.float32(), "double": pa.float64(), "bytes": pa.binary(), "string": pa.string(),
    }[name]


def _logical(node: dict[str, Any]) -> pa.DataType | None:
    """Arrow type of a logical Avro type, or None when absent/invalid (Avro says: then use the base type)."""
    lt, base = node.get("logicalType"), node.get("type")
    if lt == "decimal" and base in ("bytes", "fixed"):
        precision, scale = node.get("precision"), node.get("scale", 0)
        if not isinstance(precision, int) or not isinstance(scale, int) or not 0 <= scale <= precision <= 76:
            raise SchemaError(f"invalid Avro decimal {node!r}")
        return pa.decimal128(precision, scale) if precision <= 38 else pa.decimal256(precision, scale)
    if lt == "date" and base == "int":
        return pa.date32()
    if lt == "time-millis" and base == "int":
        return pa.time32("ms")
    if lt == "time-micros" and base == "long":
        return pa.time64("us")
    if isinstance(lt, str) and base == "long":
        for prefix, tz in (("timestamp-", "UTC"), ("local-timestamp-", None)):
            unit = _TS_UNITS.get(lt[len(prefix):]) if lt.startswith(prefix) else None
            if unit:
                return pa.timestamp(unit, tz=tz)
    if lt == "uuid" and base == "string":
        return pa.string()
    return None


def inline_named_references(schema: dict[str, Any]) -> Any:
    """A copy of `schema` where each reference to a named type is replaced by a renamed copy of its definition
    (the same binary encoding), for encoders and decoders that do not resolve references (a CDC block's `after`
    image refers to the `before` image's record)."""
    defined: dict[str, Any] = {}
    copies = [0]

    def walk(node: Any, namespace: str) -> Any:
        if isinstance(node, list):
            return [walk(n, namespace) for n in node]
        if isinstance(node, str):
            if node in _AVRO_PRIMITIVES:
                return node
            full = node if "." in node else (f"{namespace}.{node}" if namespace else node)
            found = defined.get(full)
            if found is None:
                return node
            copies[0] += 1
            return {**found, "name": f"{found['name']}_{copies[0]}"}
        if not isinstance(node, dict):
            return node
        out = dict(node)
        ns = namespace
        if node.get("type") in ("record", "enum", "fixed") and isinstance(node.get("name"), str):
            name = node["name"]
            ns = node.get("namespace", name.rpartition(".")[0] if "." in name else namespace)
            full = name if "." in name else (f"{ns}.{name}" if ns else name)
            if node.get("type") == "record":
                out["fields"] = [{**f, "type": walk(f.get("type"), ns)} for f in node.get("fields", [])]
            defined[full] = {**out, "namespace": ns} if ns else out
            return out
        if node.get("type") == "array":
            out["items"] = walk(node.get("items"), ns)
        elif node.get("type") == "map":
            out["values"] = walk(node.get("values"), ns)
        elif "type" in node:
            out["type"] = walk(node["type"], ns)
        return out

    return walk(schema, "")


_AVRO_PRIMITIVES = {"null", "boolean", "int", "long", "float", "double", "bytes", "string"}


def wire_schema(avro: dict[str, Any]) -> dict[str, Any]:
    """Copy of `avro` without date/time/timestamp/uuid logical types: same binary encoding, but fastavro then
    reads and writes plain ints/strings, which is faster and avoids Python datetime range limits."""

    def strip(node: Any) -> Any:
        if isinstance(node, list):
            return [strip(n) for n in node]
        if not isinstance(node, dict):
            return node
        if node.get("logicalType") in _WIRE_LOGICAL and node.get("type") in ("int", "long", "string"):
            return node["type"]
        out = dict(node)
        for key in ("type", "items", "values"):
            if key in out:
                out[key] = strip(out[key])
        if "fields" in out:
            out["fields"] = [{**f, "type": strip(f["type"])} for f in out["fields"]]
        return out

    return strip(avro)  # type: ignore[no-any-return]


# ---------------------------------------------------------------------------------------------- records


def avro_records_to_arrow(records: list[dict[str, Any]], schema: pa.Schema) -> pa.Table:
    """Arrow table of exactly `schema` from fastavro-decoded records (Decimal, date, datetime, dict maps, or
    the plain ints that `wire_schema` decoding yields for temporal types); missing keys become nulls."""
    try:
        arrays = [pa.array([r.get(f.name) for r in records], type=f.type) for f in schema]
        return pa.Table.from_arrays(arrays, schema=schema)
    except (pa.ArrowException, TypeError, ValueError, OverflowError) as exc:
        raise InvalidDataError(f"Avro records do not fit the Arrow schema: {exc}") from exc


def to_wire_types(table: pa.Table) -> pa.Table:
    """`table` with temporal values as plain ints in the Avro unit (days, ms, us; ns truncated to us)."""
    norm = pa.schema([pa.field(f.name, _convert_type(f.type, _norm_leaf), f.nullable) for f in table.schema])
    wire = pa.schema([pa.field(f.name, _convert_type(f.type, _wire_leaf), f.nullable) for f in norm])
    return table.cast(norm, safe=False).cast(wire)


def arrow_to_avro_records(table: pa.Table) -> list[dict[str, Any]]:
    """Python records of `table` ready for fastavro against `wire_schema(arrow_to_avro(table.schema, ...))`.

    Temporal values are plain ints in the Avro unit (days, ms, us; ns truncated to us), maps become dicts.
    """
    table = to_wire_types(table)
    records: list[dict[str, Any]] = table.to_pylist()
    fixers = [(f.name, fx) for f in table.schema if (fx := _map_fixer(f.type)) is not None]
    for name, fix in fixers:
        for rec in records:
            rec[name] = fix(rec[name])
    return records


def _norm_leaf(t: pa.DataType) -> pa.DataType:
    """Temporal types in the unit Avro stores (precision loss only for ns)."""
    pt = pa.types
    if pt.is_date64(t):
        return pa.date32()
    if pt.is_time32(t):
        return pa.time32("ms")
    if pt.is_time64(t):
        return pa.time64("us")
    if pt.is_timestamp(t):
        return pa.timestamp("ms" if t.unit in ("s", "ms") else "us", tz=t.tz)
    return t


def _wire_leaf(t: pa.DataType) -> pa.DataType:
    pt = pa.types
    if pt.is_date32(t) or pt.is_time32(t):
        return pa.int32()
    if pt.is_time64(t) or pt.is_timestamp(t):
        return pa.int64()
    return t


def _convert_type(t: pa.DataType, leaf: Callable[[pa.DataType], pa.DataType]) -> pa.DataType:
    pt = pa.types
    if pt.is_list(t) or pt.is_large_list(t):
        return pa.list_(pa.field("item", _convert_type(t.value_type, leaf), t.value_field.nullable))
    if pt.is_map(t):
        return pa.map_(t.key_type, pa.field("value", _convert_type(t.item_type, leaf), t.item_field.nullable))
    if pt.is_struct(t):
        return pa.struct([pa.field(f.name, _convert_type(f.type, leaf), f.nullable) for f in t])
    return leaf(t)


def _map_fixer(t: pa.DataType) -> Callable[[Any], Any] | None:
    """Converter turning Arrow's list-of-tuples maps into dicts (recursively), or None if `t` has no map."""
    pt = pa.types
    if pt.is_map(t):
        item = _map_fixer(t.item_type)
        if item is None:
            return lambda v: None if v is None else dict(v)
        return lambda v: None if v is None else {k: item(x) for k, x in v}
    if pt.is_list(t) or pt.is_large_list(t):
        elem = _map_fixer(t.value_type)
        if elem is None:
            return None
        return lambda v: None if v is None else [elem(x) for x in v]
    if pt.is_struct(t):
        subs = [(f.name, fx) for f in t if (fx := _map_fixer(f.type)) is not None]
        if not subs:
            return None

        def fix_struct(v: Any) -> Any:
            if v is not None:
                for name, fx in subs:
                    v[name] = fx(v[name])
            return v

        return fix_struct
    return None
