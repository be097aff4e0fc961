"""Apache Hudi 1.x's secondary indexes: the `secondary_index_<name>` metadata partitions SQL `CREATE INDEX` makes,
read as Hudi lays them out (SecondaryIndexKeyUtils, SecondaryIndexRecordGenerationUtils, the reference tables).

An index covers one column (its definition in the index definitions file: indexType `secondary_index`,
indexFunction `identity`, one sourceFields entry). It holds one record per row of the table, keyed
`<escaped secondary value>$<escaped record key>` (escaping puts `\\` before `\\`, `$` and NUL; a null value is a
lone NUL), of type 7 with `SecondaryIndexMetadata: {isDeleted: false}`. The value is the text of the column as
Spark holds it (Java's toString of Spark's internal value): a string itself, an integer in decimal, a boolean
`true`/`false`, a date its days since 1970-01-01. A writer that changes a row's value removes the old key (a
DELETE block entry) and adds the new one; removing a row removes its key.

Its file groups are `secondary-index-<name>-NNNN-0` (the name's `_` as `-`), as many as the index was built with
(10 in the reference tables). A key's file group is Java's String.hashCode modulo their count, of the whole key in a version 1 index
(Hudi 1.0, definitions without a version) and of its escaped value with the `$` in a version 2 one (Hudi 1.1's
"V2": one value's keys share a file group, so a lookup by value reads one), as the reference tables' files show.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError, UnsupportedTableError
from hudi_ds.metadata import records as md
from hudi_ds.metadata.index_defs import secondary_index_definitions
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import files_slice, merged_records
from hudi_ds.metadata.record_index import java_string_hash
from hudi_ds.storage import Storage
from hudi_ds.timeline import Timeline

ESCAPE = "\\"
SEPARATOR = "$"
NULL_VALUE = "\x00"  # the escaped form of a null value
_VERSIONS = {"V1": 1, "V2": 2}  # a definition's version (none: Hudi 1.0's, version 1)
# The Avro bytes of every live entry (HFile value, key field blanked): five null meta fields, the blank key, type 7,
# four null payloads, then SecondaryIndexMetadata {isDeleted: false}; the same in the schemas of versions 8 and 9,
# and in the reference tables' files. Entries are read and written by these bytes (a million without fastavro).
LIVE_VALUE = bytes.fromhex("0000000000000e000000000200")


@dataclass(frozen=True)
class SecondaryIndex:
    """One secondary index: its metadata partition, the column it covers and its layout version (1 or 2)."""

    partition: str
    column: str
    version: int

    @property
    def file_group_prefix(self) -> str:
        return self.partition.replace("_", "-")

    def file_group_id(self, index: int) -> str:
        return f"{self.file_group_prefix}-{index:04d}-0"


def secondary_indexes(data_storage: Storage, partitions: list[str]) -> list[SecondaryIndex]:
    """The secondary indexes among the metadata `partitions` the table lists, from their definitions; a
    CorruptTableError for one without a definition, an UnsupportedTableError for a definition hudi_ds does not
    know (an expression over the column, several columns, another layout version)."""
    names = [p for p in partitions if p.startswith(md.SECONDARY_INDEX_PREFIX)]
    if not names:
        return []
    definitions = secondary_index_definitions(data_storage)
    out = []
    for name in names:
        definition = definitions.get(name)
        if definition is None:
            raise CorruptTableError(f"the metadata table lists {name} but the index definitions file has no "
                                    "definition of it: drop the index (Hudi's DROP INDEX) and create it again")
        fields, function = definition.get("sourceFields"), definition.get("indexFunction")
        raw_version = definition.get("version")
        version = 1 if raw_version is None else _VERSIONS.get(str(raw_version))
        if not (isinstance(fields, list) and len(fields) == 1 and isinstance(fields[0], str)) or \
                function not in ("identity", "", None) or version is None:
            raise UnsupportedTableError(
                f"secondary index {name} (sourceFields={fields!r}, indexFunction={function!r}, "
                f"version={definition.get('version')!r}): hudi_ds knows identity indexes of one column, versions "
                "V1 and V2")
        out.append(SecondaryIndex(name, fields[0], version))
    return out


# ------------------------------------------------------------------------------------------------ keys


def escape(value: str | None) -> str:
    """SecondaryIndexKeyUtils.escapeSpecialChars: a null value is a lone NUL."""
    if value is None:
        return NULL_VALUE
    return re.sub(r"([\\$\x00])", r"\\\1", value)


def unescape(text: str) -> str | None:
    if text == NULL_VALUE:
        return None
    return re.sub(r"\\(.)", r"\1", text, flags=re.DOTALL)


def index_key(value: str | None, record_key: str) -> str:
    """The key of the index record of a row whose indexed column has the text `value`."""
    return f"{escape(value)}{SEPARATOR}{escape(record_key)}"


def split_key(key: str) -> tuple[str, str]:
    """The escaped value (with its `$`) and the escaped record key of an index key."""
    i = 0
    while i < len(key):
        if key[i] == ESCAPE:
            i += 2
            continue
        if key[i] == SEPARATOR:
            return key[:i + 1], key[i + 1:]
        i += 1
    raise CorruptTableError(f"secondary index key {key!r} has no unescaped {SEPARATOR!r}")


def file_group_of(index: SecondaryIndex, key: str, count: int) -> int:
    """The file group of `key` among `count`: the hash of the whole key (version 1) or of its value part
    (version 2)."""
    hashed = key if index.version == 1 else split_key(key)[0]
    return abs(java_string_hash(hashed)) % count


def value_texts(column: pa.Array | pa.ChunkedArray, where: str) -> pa.Array:
    """The index's text of each value of a column (null stays null); an UnsupportedTableError for a type whose
    text hudi_ds has not matched with Hudi's."""
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    t = column.type
    if pa.types.is_string(t) or pa.types.is_large_string(t):
        return column.cast(pa.string())
    if pa.types.is_integer(t) or pa.types.is_boolean(t):
        return column.cast(pa.string())  # decimal digits; true/false, as Java prints them
    if pa.types.is_date32(t):
        return column.cast(pa.int32()).cast(pa.string())
    raise UnsupportedTableError(f"{where}: a secondary index over a column of type {t}; hudi_ds knows the index "
                                "text of strings, integers, booleans and dates")


def expected_keys(record_keys: pa.Array | pa.ChunkedArray, values: pa.Array) -> pa.Array:
    """The index keys of rows with these record keys and value texts."""
    def escaped(col: pa.Array) -> pa.Array:
        for ch in (ESCAPE, SEPARATOR, "\x00"):
            col = pc.replace_substring(col, ch, ESCAPE + ch)
        return pc.fill_null(col, NULL_VALUE)

    rk = record_keys.combine_chunks() if isinstance(record_keys, pa.ChunkedArray) else record_keys
    return pc.binary_join_element_wise(escaped(values), escaped(rk.cast(pa.string())), SEPARATOR)


# ------------------------------------------------------------------------------------------- reading it


def decode(data: bytes, key: str) -> dict[str, Any] | None:
    """A live entry's record from its bytes (hudi_ds.hfile.avro_records.Decoder); None: another shape, left to
    fastavro."""
    return md.secondary_index_record(key) if data == LIVE_VALUE else None


def live_values(count: int) -> pa.Array:
    """The HFile values of `count` live entries."""
    return pa.repeat(pa.scalar(LIVE_VALUE, pa.binary()), count)



@dataclass(frozen=True)
class IndexContents:
    """The keys an index holds (sorted) and those held in another file group than their hash names."""

    keys: list[str]
    misplaced: list[tuple[str, int, int]]  # key, file group holding it, file group it hashes to


def file_group_numbers(index: SecondaryIndex, names: list[str]) -> list[int]:
    """The numbers of the index's file groups among the file `names` of its folder: 0..N-1, else a
    CorruptTableError (a key would hash to a missing group)."""
    pattern = re.compile(rf"^\.?{re.escape(index.file_group_prefix)}-(\d{{4}})-0_")
    seen = sorted({int(m.group(1)) for n in names if (m := pattern.match(n))})
    if seen != list(range(len(seen))):
        raise CorruptTableError(f"the metadata table's {index.partition} has file groups {seen}, not 0..N-1: drop "
                                "the index and create it again")
    return seen


def read_index(mdt: MetadataTable, data_timeline: Timeline, index: SecondaryIndex) -> IndexContents:
    """Every key of the index as a reader merges its file groups (deltacommits of completed data instants)."""
    listed = [e for e in mdt.storage.list(index.partition) if not e.is_dir]
    groups = file_group_numbers(index, [e.name for e in listed])
    mdt_timeline = mdt.timeline()
    keys: list[str] = []
    misplaced: list[tuple[str, int, int]] = []
    for number in groups:
        sl = files_slice(mdt, mdt_timeline, data_timeline, listed, index.partition, index.file_group_id(number))
        for key, record in merged_records(mdt, sl, decoder=decode).items():
            if record.get("type") != md.RecordType.SECONDARY_INDEX:
                raise CorruptTableError(f"{index.partition}: record {key!r} is of type {record.get('type')}, not "
                                        "a secondary index entry")
            keys.append(key)
            hashed = file_group_of(index, key, len(groups))
            if hashed != number:
                misplaced.append((key, number, hashed))
    return IndexContents(sorted(keys), misplaced)
