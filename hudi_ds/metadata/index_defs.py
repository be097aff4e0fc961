"""Apache Hudi 1.x's index definitions file: which columns each metadata index covers.

Hudi keeps it at the path hoodie.properties' `hoodie.table.index.defs.path` names (`.hoodie/.index_defs/index.json`),
a JSON object `{"indexDefinitions": {name: {"indexName", "indexType", "sourceFields", ...}}}`. Its column_stats
definition's `sourceFields` are the columns Hudi's writers index (meta columns included), so the next writes,
ours or Hudi's, must index the same ones. A table without the file, or without a column_stats definition listing
columns, indexes Hudi's default selection. hoodie.metadata.index.column.stats.column.list writes the definition
(as Hudi's writers do after each commit), dropping column_stats removes it (as Hudi's drop does); building and
dropping the record index adds and removes its definition.
"""

from __future__ import annotations

import json

from hudi_ds.config import properties
from hudi_ds.errors import CorruptTableError
from hudi_ds.metadata.records import COLUMN_STATS, RECORD_INDEX
from hudi_ds.storage import Storage, require_inside
from hudi_ds.storage.layout import PROPS_PATH

INDEX_DEFS_PATH_KEY = "hoodie.table.index.defs.path"  # in the data table's hoodie.properties
DEFAULT_PATH = ".hoodie/.index_defs/index.json"  # where Hudi 1.x puts it
SECONDARY_INDEX = "secondary_index"  # a secondary index definition's indexType


def _definitions(data_storage: Storage) -> tuple[str, dict[str, dict[str, object]]]:
    """The table's index definitions file and its definitions by name (read afresh), empty when it has no
    definitions file."""
    props = properties.loads(properties.decode_bytes(data_storage.read_bytes(PROPS_PATH)))
    path = props.get(INDEX_DEFS_PATH_KEY, "").strip()
    if not path:
        return path, {}
    rel = require_inside(path, PROPS_PATH)
    if not data_storage.exists(rel):
        return rel, {}
    try:
        parsed = json.loads(data_storage.read_bytes(rel))
        definitions = parsed.get("indexDefinitions", {}) if isinstance(parsed, dict) else None
        if not isinstance(definitions, dict) or not all(isinstance(d, dict) for d in definitions.values()):
            raise ValueError("no indexDefinitions object of definition objects")
    except (ValueError, UnicodeDecodeError) as e:
        raise CorruptTableError(f"the index definitions file {rel} is not Hudi's JSON ({e}); repair it or remove "
                                f"it (and {INDEX_DEFS_PATH_KEY} from {PROPS_PATH})") from e
    return rel, definitions


def column_stats_fields(data_storage: Storage) -> list[str] | None:
    """The columns the table's column_stats definition lists, None when it lists none (Hudi's default
    selection then)."""
    rel, definitions = _definitions(data_storage)
    definition = definitions.get(COLUMN_STATS)
    if definition is None:
        return None
    fields = definition.get("sourceFields")
    if fields is not None and not (isinstance(fields, list) and all(isinstance(f, str) for f in fields)):
        raise CorruptTableError(f"the index definitions file {rel} gives column_stats the sourceFields {fields!r}, "
                                "not a list of column names; repair it or remove it")
    return list(fields) if fields else None


def secondary_index_definitions(data_storage: Storage) -> dict[str, dict[str, object]]:
    """The definitions of the table's secondary indexes (indexType `secondary_index`), by partition name."""
    return {name: d for name, d in _definitions(data_storage)[1].items() if d.get("indexType") == SECONDARY_INDEX}


def _write(data_storage: Storage, rel: str, definitions: dict[str, dict[str, object]]) -> None:
    data_storage.write_bytes(rel, json.dumps({"indexDefinitions": definitions}, indent=2).encode())


def _set(data_storage: Storage, name: str, definition: dict[str, object]) -> None:
    """Record the definition `name`, naming the file in hoodie.properties when the table has none yet."""
    rel, definitions = _definitions(data_storage)
    if not rel:
        rel = DEFAULT_PATH
        props = properties.loads(properties.decode_bytes(data_storage.read_bytes(PROPS_PATH)))
        props[INDEX_DEFS_PATH_KEY] = rel
        data_storage.write_bytes(PROPS_PATH, properties.dumps(props, "Updated by hudi_ds").encode(
            "latin-1", "backslashreplace"))
    _write(data_storage, rel, {**definitions, name: definition})


def _remove(data_storage: Storage, name: str) -> None:
    rel, definitions = _definitions(data_storage)
    if name in definitions:
        _write(data_storage, rel, {k: v for k, v in definitions.items() if k != name})


def set_column_stats_fields(data_storage: Storage, version: int, fields: list[str]) -> None:
    """Record `fields` as the columns column_stats covers (Hudi's definition: version 9 tables' carry a version,
    V2 for column_stats)."""
    older = _definitions(data_storage)[1].get(COLUMN_STATS, {})
    definition: dict[str, object] = {"indexName": COLUMN_STATS, "indexType": COLUMN_STATS,
                                     "indexFunction": COLUMN_STATS, "sourceFields": fields, "indexOptions": {}}
    if version >= 9:
        definition["version"] = older.get("version", "V2")
    _set(data_storage, COLUMN_STATS, definition)


def remove_column_stats(data_storage: Storage) -> None:
    """Remove the column_stats definition (the partition is being dropped)."""
    _remove(data_storage, COLUMN_STATS)


def add_record_index(data_storage: Storage, version: int) -> None:
    """Record the record index's definition as Hudi 1.1 does on version 9 tables (a global index: not
    partitioned); version 8 tables get none (Hudi 1.0 recorded only column_stats and secondary indexes)."""
    if version >= 9 and RECORD_INDEX not in _definitions(data_storage)[1]:
        _set(data_storage, RECORD_INDEX, {"indexName": RECORD_INDEX, "indexType": RECORD_INDEX, "indexFunction": "",
                                          "sourceFields": [], "indexOptions": {"isPartitioned": "false"},
                                          "version": "V1"})


def remove_record_index(data_storage: Storage) -> None:
    """Remove the record index's definition (the partition is being dropped)."""
    _remove(data_storage, RECORD_INDEX)
