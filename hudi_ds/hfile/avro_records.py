"""Avro records in an HFile, as Hudi keeps them in metadata table base files and HFile log blocks.

Key: the record key, UTF-8. Value: the record's Avro binary encoding with its key field blanked to "" (the key is
already the HFile key; readers put it back). File info `schema`: the writer schema's JSON text. Hudi's base file
writer (HoodieAvroHFileWriter) adds the record key range and a bloom filter; the log block writer
(HFileUtils.serializeRecordsToLogBlock) does not. Records decode to dicts as fastavro gives them, except that a
union with several record branches (the column statistics value wrappers) decodes to a `(full name, dict)`
pair, so the branch survives a rewrite.
"""

from __future__ import annotations

import functools
import io
import json
from collections.abc import Callable, Collection, Iterable, Iterator, Mapping
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError, InvalidDataError
from hudi_ds.hfile.block import Compression
from hudi_ds.hfile.bloom import BLOOM_FILTER_META_BLOCK, BloomFilter
from hudi_ds.hfile.reader import HFileReader
from hudi_ds.hfile.writer import DEFAULT_BLOCK_SIZE, HFileWriter

KEY_FIELD = "key"
SCHEMA_INFO = "schema"
MIN_RECORD_KEY = "minRecordKey"
MAX_RECORD_KEY = "maxRecordKey"
BLOOM_FILTER_TYPE_CODE = "bloomFilterTypeCode"


@functools.lru_cache(maxsize=16)
def _parsed(schema_json: str) -> Any:
    import fastavro  # imported where used: `import hudi_ds` does not pay for it (issue 32)

    return fastavro.parse_schema(json.loads(schema_json))


@functools.lru_cache(maxsize=16)
def _has_key_field(schema_json: str) -> bool:
    return any(f.get("name") == KEY_FIELD for f in json.loads(schema_json).get("fields", []))


def _record_names(node: Any, out: set[str]) -> set[str]:
    """The names (short and full) of every record type defined in a schema."""
    if isinstance(node, list):
        for branch in node:
            _record_names(branch, out)
    elif isinstance(node, dict):
        if node.get("type") == "record":
            out.add(node["name"])
            if node.get("namespace"):
                out.add(f"{node['namespace']}.{node['name']}")
        for child in (node.get("fields"), node.get("type"), node.get("items"), node.get("values")):
            if child is not None and not isinstance(child, str):
                _record_names(child, out)
    return out


def _has_record_union(node: Any, records: set[str]) -> bool:
    """Whether a union with two or more record branches occurs in `node`."""
    if isinstance(node, list):
        branches = [b for b in node if (isinstance(b, dict) and b.get("type") == "record")
                    or (isinstance(b, str) and b in records)]
        return len(branches) > 1 or any(_has_record_union(b, records) for b in node)
    if isinstance(node, dict):
        return any(_has_record_union(child, records) for child in
                   (node.get("fields"), node.get("type"), node.get("items"), node.get("values"))
                   if child is not None and not isinstance(child, str))
    return False


@functools.lru_cache(maxsize=16)
def _fields_with_record_unions(schema_json: str) -> tuple[str, ...]:
    """Top-level fields whose values may hold a union of several records: only a record with one of them set
    needs fastavro's (four times slower) decoding that keeps union branch names."""
    schema = json.loads(schema_json)
    records = _record_names(schema, set())
    return tuple(f["name"] for f in schema.get("fields", []) if _has_record_union(f.get("type"), records))


Encoder = Callable[[dict[str, Any]], "bytes | None"]  # a record's Avro bytes by a fast path, None: not its shape
Decoder = Callable[[bytes, str], "dict[str, Any] | None"]  # (value, key) -> record by a fast path, None: fastavro


def write_avro_hfile(records: Mapping[str, dict[str, Any]], schema_json: str, *,
                     bloom_filter: BloomFilter | None = None, block_size: int = DEFAULT_BLOCK_SIZE,
                     compression: Compression = Compression.GZ, created_ms: int | None = None,
                     encoder: Encoder | None = None) -> bytes:
    """An HFile of `records` (record key -> record), written in unsigned UTF-8 byte order of the keys.

    `bloom_filter` (empty, sized by the caller): as Hudi's base file writer, add the keys to it and store it with
    the key range and its type code (a log block's HFile has none). `schema_json` is stored verbatim as the
    `schema` file info, so pass the exact text Hudi writes (e.g. `metadata_schema_json`). `encoder`: a faster
    encoding of the records it knows, which must give fastavro's bytes.
    """
    keys, values = encode_values(records, schema_json, encoder)
    return write_encoded_hfile(keys, values, schema_json, bloom_filter=bloom_filter, block_size=block_size,
                               compression=compression, created_ms=created_ms)


def encode_values(records: Mapping[str, dict[str, Any]], schema_json: str,
                  encoder: Encoder | None = None) -> tuple[pa.Array, pa.Array]:
    """The keys (string) and HFile values (binary: Avro bytes, key field blanked) of `records`, in their order."""
    parsed = _parsed(schema_json)
    blank_key = _has_key_field(schema_json)
    values = []
    for key, record in records.items():
        try:
            key.encode("utf-8")
        except UnicodeEncodeError as exc:
            raise InvalidDataError(f"an HFile record key is not valid text: {exc}") from exc
        if blank_key and record.get(KEY_FIELD):
            record = {**record, KEY_FIELD: ""}
        fast = encoder(record) if encoder is not None else None
        if fast is not None:
            values.append(fast)
            continue
        import fastavro

        out = io.BytesIO()
        try:
            fastavro.schemaless_writer(out, parsed, record)
        except (ValueError, TypeError, KeyError, OverflowError) as exc:
            raise InvalidDataError(f"record {key!r} does not fit the HFile's Avro schema: {exc}") from exc
        values.append(out.getvalue())
    return pa.array(list(records), pa.string()), pa.array(values, pa.binary())


def write_encoded_hfile(keys: pa.Array, values: pa.Array, schema_json: str, *,
                        bloom_filter: BloomFilter | None = None, block_size: int = DEFAULT_BLOCK_SIZE,
                        compression: Compression = Compression.GZ, created_ms: int | None = None) -> bytes:
    """`write_avro_hfile` of records already encoded: `keys` (string, distinct, any order: sorted here unless
    they come sorted) and their `values` (binary, as `encode_values` gives them), written column-wise (no Python
    object per entry)."""
    raw = pc.cast(keys, pa.binary())
    if len(keys) > 1 and not pc.all(pc.less(raw[:-1], raw[1:])).as_py():  # a caller may give them sorted
        order = pc.sort_indices(raw)
        keys, values = keys.take(order), values.take(order)
    writer = HFileWriter(block_size=block_size, compression=compression, created_ms=created_ms)
    writer.add_file_info(SCHEMA_INFO, schema_json.encode("utf-8"))
    writer.append_all(keys, values)
    if bloom_filter is not None:
        bloom_filter.add_strings(keys)
        writer.add_file_info(MIN_RECORD_KEY, keys[0].as_py().encode("utf-8") if len(keys) else b"")
        writer.add_file_info(MAX_RECORD_KEY, keys[-1].as_py().encode("utf-8") if len(keys) else b"")
        writer.add_file_info(BLOOM_FILTER_TYPE_CODE, bloom_filter.type_code.encode("utf-8"))
        writer.add_meta_block(BLOOM_FILTER_META_BLOCK, bloom_filter.serialize())
    return writer.finish()


class AvroHFileReader:
    """The records of an HFile written by `write_avro_hfile` or by Hudi, decoded with the file's own schema (or
    `schema_json`, e.g. a log block's SCHEMA header) and their keys restored."""

    def __init__(self, source: bytes | bytearray | memoryview | pa.NativeFile, path: str,
                 schema_json: str | None = None, decoder: Decoder | None = None) -> None:
        self.hfile = HFileReader(source, path)
        self.path = path
        self._decoder = decoder  # a faster decoding of the records it knows, giving fastavro's records
        stored = self.hfile.file_info.get(SCHEMA_INFO.encode())
        if schema_json is None:
            if stored is None:
                raise CorruptTableError(f"{path}: HFile has no `schema` file info to decode its records with")
            schema_json = stored.decode("utf-8", "replace")
        self.schema_json = schema_json
        try:
            self._schema = _parsed(schema_json)
        except Exception as exc:  # invalid JSON or Avro: fastavro raises assorted types
            raise CorruptTableError(f"{path}: unusable Avro schema in HFile ({type(exc).__name__}: {exc})") from exc
        self._restore_key = _has_key_field(schema_json)
        self._named_unions = _fields_with_record_unions(schema_json)

    def _read_value(self, text: str, value: bytes, with_names: bool) -> dict[str, Any]:
        import fastavro

        buffer = io.BytesIO(value)
        try:
            record = fastavro.schemaless_reader(buffer, self._schema, None, return_record_name=with_names,
                                                return_record_name_override=with_names)
        except Exception as exc:  # fastavro raises assorted exception types on bad bytes
            raise CorruptTableError(f"{self.path}: value of key {text!r} is not a record of the file's schema "
                                    f"({type(exc).__name__}: {exc})") from exc
        if buffer.tell() != len(value) or not isinstance(record, dict):
            raise CorruptTableError(f"{self.path}: value of key {text!r} has bytes left over after its record")
        return record

    def _decode(self, key: bytes, value: bytes) -> tuple[str, dict[str, Any]]:
        text = key.decode("utf-8", "replace")
        if self._decoder is not None and self._restore_key:
            fast = self._decoder(value, text)
            if fast is not None:
                return text, fast
        record = self._read_value(text, value, with_names=False)
        if any(record.get(name) is not None for name in self._named_unions):
            record = self._read_value(text, value, with_names=True)
        if self._restore_key:
            record[KEY_FIELD] = text
        return text, record

    def record(self, key: bytes, value: bytes) -> dict[str, Any]:
        """The record of one entry (`key` and `value` as `HFileReader.select_columns` gives them)."""
        return self._decode(key, value)[1]

    def get(self, key: str) -> dict[str, Any] | None:
        """The record stored under `key`, or None."""
        value = self.hfile.get(key.encode("utf-8"))
        return None if value is None else self._decode(key.encode("utf-8"), value)[1]

    def get_many(self, keys: Iterable[str]) -> dict[str, dict[str, Any]]:
        """The present ones of `keys` with their records."""
        found = self.hfile.get_many(sorted(k.encode("utf-8") for k in keys))
        return dict(self._decode(k, v) for k, v in found.items())

    def select(self, keys: Collection[str]) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, record) of the present ones of `keys`, in key order: one pass over the file, decoding only
        those (a batch lookup that would otherwise search block by block for each key)."""
        wanted = pa.array(list(keys), pa.string()).cast(pa.binary())
        for key, value in self.hfile.select(wanted):
            yield self._decode(key, value)

    def scan_prefix(self, prefix: str) -> Iterator[tuple[str, dict[str, Any]]]:
        """(key, record) of the keys starting with `prefix`, in key order."""
        for key, value in self.hfile.scan_prefix(prefix.encode("utf-8")):
            yield self._decode(key, value)

    def __iter__(self) -> Iterator[tuple[str, dict[str, Any]]]:
        for key, value in self.hfile:
            yield self._decode(key, value)
