"""Read one file slice: its base file and the visible blocks of its log files, merged."""

from __future__ import annotations

import json
from dataclasses import dataclass, field

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import CorruptTableError, HudiDsError, MissingFileError
from hudi_ds.files.base_file import open_base_file
from hudi_ds.files.view import FileSlice, Visibility
from hudi_ds.keys.keygen import integer_keys
from hudi_ds.keys.matching import is_in
from hudi_ds.keys.virtual_keys import computed_meta
from hudi_ds.log.blocks import (
    DeleteRecords,
    decode_avro_data_block,
    decode_delete_block,
    decode_parquet_data_block,
)
from hudi_ds.log.format import BlockType, HeaderKey, LogBlock, read_blocks
from hudi_ds.merge import LogDeletes, LogVersions, merge_slice
from hudi_ds.merge.partial import PartialUpdate
from hudi_ds.read.conform import conform
from hudi_ds.read.splits import SlicePart
from hudi_ds.schema.meta import RECORD_KEY
from hudi_ds.schema.strings import alike_dictionaries
from hudi_ds.storage import Storage


@dataclass
class _LogContent:
    data: list[pa.Table] = field(default_factory=list)
    data_rank: list[np.ndarray] = field(default_factory=list)
    data_pos: list[np.ndarray] = field(default_factory=list)
    absent: list[frozenset[str]] = field(default_factory=list)  # per data block: the columns it does not carry
    deletes: list[tuple[DeleteRecords, int, int]] = field(default_factory=list)  # (block's deletes, rank, position)


@dataclass(frozen=True)
class SliceReader:
    """Everything needed to turn file slices into rows of `schema` (meta columns included)."""

    storage: Storage
    schema: pa.Schema
    ordering_field: str | None
    visibility: Visibility
    synthesize_meta: bool = False  # tables written with hoodie.populate.meta.fields=false (hudi_ds.keys.virtual_keys)
    committed_logs: frozenset[str] = frozenset()  # log files that visible commits list
    merge_key: str = RECORD_KEY  # the column merging matches records by (keys.keygen.integer_key_column)
    partial: PartialUpdate | None = None  # the table's partial update mode (hudi_ds.merge.partial)
    key_fields: tuple[str, ...] = ()  # the record key columns virtual keys are computed from
    first_value: bool = False  # ties keep the first version (FirstValueAvroPayload)

    def read_base(self, sl: FileSlice, row_groups: tuple[int, ...] | None = None,
                  keep_dictionaries: bool = False) -> pa.Table | None:
        """The base file's rows (of `row_groups` only, if given) as `schema`; with `keep_dictionaries`, the
        columns read as dictionaries stay so (read_part expands them after merging), merge columns aside."""
        if sl.base_file is None:
            return None
        path = sl.base_file.path
        with open_base_file(self.storage, path, few_valued_as_dictionary=True) as pf:
            columns = self._projection(pf.schema_arrow.names)
            if row_groups is None:
                table = pf.read(columns=columns)
            else:
                table = pf.read_row_groups(list(row_groups), columns=columns)
        if self.synthesize_meta:
            table = computed_meta(table, self.key_fields, sl.partition, sl.base_file.instant, sl.base_file.name)
        return conform(table, self.schema, path, self._kept_dictionaries() if keep_dictionaries else frozenset())

    def read_base_keys(self, sl: FileSlice, keys: pa.Array | pa.ChunkedArray) -> pa.Table | None:
        """The base rows whose merge key is one of `keys` only: the key column is decoded first and the other
        columns only when the file holds one of them (the change of a commit needs the previous version of the
        keys it wrote). A record key that an integer merge key spells is written from it, not decoded."""
        if sl.base_file is None:
            return None
        path, key_field = sl.base_file.path, self.merge_key
        with open_base_file(self.storage, path, few_valued_as_dictionary=True) as pf:
            names = pf.schema_arrow.names
            if self.synthesize_meta or key_field not in names:
                table = None
            else:
                key = pf.read(columns=[key_field])[key_field]
                mask = is_in(key, keys if keys.type == key.type else keys.cast(key.type))
                if not pc.any(mask).as_py():
                    return self.schema.empty_table()
                spelled = key_field != RECORD_KEY and RECORD_KEY in self.schema.names
                others = [c for c in self._projection(names) or names
                          if c != key_field and not (spelled and c == RECORD_KEY)]
                key = key.filter(mask)
                table = pf.read(columns=others).filter(mask).append_column(key_field, key)
                if spelled:
                    table = table.append_column(RECORD_KEY, pc.cast(key, pa.string()))
        if table is None:
            whole = self.read_base(sl)
            assert whole is not None
            return whole.filter(pc.is_in(whole[key_field], value_set=keys))
        return conform(table, self.schema, path)

    def _projection(self, file_columns: list[str]) -> list[str] | None:
        """The file's columns this reader's schema keeps (None: all of them)."""
        wanted = set(self.schema.names)
        if self.synthesize_meta or wanted.issuperset(file_columns):
            return None
        return [c for c in file_columns if c in wanted]

    def _blocks(self, sl: FileSlice) -> list[tuple[str, LogBlock]]:
        blocks: list[tuple[str, LogBlock]] = []
        for lf in sl.log_files:
            try:
                data = self.storage.read_bytes(lf.path)
            except FileNotFoundError as exc:
                raise MissingFileError(f"log file {lf.path} is missing: restore it, or roll back the commit that "
                                       "wrote it") from exc
            blocks.extend((lf.path, b) for b in read_blocks(data, lf.path))
        return blocks

    def read_logs(self, sl: FileSlice, keep_dictionaries: bool = False) -> tuple[LogVersions | None, LogDeletes | None]:
        """The slice's committed log versions and deletes; with `keep_dictionaries`, few-valued string columns of
        parquet blocks stay dictionary-encoded (merge columns aside), as read_base keeps them."""
        vis = self.visibility
        kept = self._kept_dictionaries() if keep_dictionaries else frozenset()
        blocks = self._blocks(sl)
        rolled_back = {
            b.target_instant_time for _, b in blocks if b.block_type == BlockType.COMMAND and vis.sees(b.instant_time)
        }
        content = _LogContent()
        position = 0
        for path, block in blocks:
            instant = block.instant_time
            if block.block_type == BlockType.CORRUPT:
                if vis.sees(instant) or (instant is None and path in self.committed_logs):
                    raise CorruptTableError(
                        f"log file {path} has a truncated or corrupt block at byte {block.offset}"
                        + (f" written by committed instant {instant}" if instant else "")
                        + "; restore the file or roll back that instant"
                    )
                continue
            if block.block_type == BlockType.COMMAND or instant in rolled_back or not vis.sees(instant):
                continue
            assert instant is not None
            if vis.as_of is not None and instant > vis.as_of and instant not in vis.committed:
                continue
            rank = vis.order_key(instant)
            position = self._add_block(content, path, block, rank, position, kept)
        return self._finish(content)

    def _kept_dictionaries(self) -> frozenset[str]:
        return frozenset(self.schema.names) - {self.merge_key, self.ordering_field}

    def _add_block(self, content: _LogContent, path: str, block: LogBlock, rank: int, position: int,
                   kept: frozenset[str]) -> int:
        try:
            if block.block_type == BlockType.AVRO_DATA:
                table = decode_avro_data_block(block, path, self.schema)
            elif block.block_type == BlockType.PARQUET_DATA:
                table = decode_parquet_data_block(block, path, self.schema, kept)
            elif block.block_type == BlockType.DELETE:
                dels = decode_delete_block(block, path)
                content.deletes.append((dels, rank, position))
                return position + len(dels.record_keys)
            else:
                raise CorruptTableError(f"log file {path}: block type {block.block_type.name} is not supported")
        except HudiDsError:
            raise
        except Exception as exc:  # a decoder surprise must still name the file
            raise CorruptTableError(f"log file {path}: cannot decode {block.block_type.name} block: {exc}") from exc
        n = table.num_rows
        content.absent.append(self._absent_columns(block))
        content.data.append(table)
        content.data_rank.append(np.full(n, rank, dtype=np.int64))
        content.data_pos.append(np.arange(position, position + n, dtype=np.int64))
        return position + n

    def _absent_columns(self, block: LogBlock) -> frozenset[str]:
        """The columns of the schema a partial block (IS_PARTIAL, written by Hudi 1.1 partial updates) leaves out:
        its SCHEMA header names the columns it carries."""
        if (block.header.get(HeaderKey.IS_PARTIAL) or "").strip().lower() != "true" or not block.schema_json:
            return frozenset()
        try:
            carried = {f["name"] for f in json.loads(block.schema_json)["fields"]}
        except (ValueError, KeyError, TypeError) as exc:
            raise CorruptTableError(f"a partial log block at byte {block.offset} has an unusable SCHEMA header "
                                    f"({type(exc).__name__}: {exc})") from exc
        return frozenset(self.schema.names) - carried

    def _finish(self, c: _LogContent) -> tuple[LogVersions | None, LogDeletes | None]:
        data = None
        if c.data:
            absent = None
            if any(c.absent):
                absent = {name: np.concatenate([np.full(len(t), name in gone) for t, gone in zip(c.data, c.absent,
                                                                                                strict=True)])
                          for name in set().union(*c.absent)}
            data = LogVersions(pa.concat_tables(alike_dictionaries(c.data)), np.concatenate(c.data_rank),
                               np.concatenate(c.data_pos), absent)
        deletes = None
        if c.deletes:
            ord_type = self.schema.field(self.ordering_field).type if self.ordering_field else pa.int64()
            deletes = LogDeletes(
                keys=pa.concat_arrays([d.record_keys for d, _, _ in c.deletes]),
                ordering=pa.concat_arrays([_typed(d.ordering_values, d.natural, ord_type) for d, _, _ in c.deletes]),
                natural=np.concatenate([d.natural for d, _, _ in c.deletes]),
                rank=np.concatenate([np.full(len(d.natural), r, dtype=np.int64) for d, r, _ in c.deletes]),
                position=np.concatenate([np.arange(p, p + len(d.natural), dtype=np.int64) for d, _, p in c.deletes]),
            )
        return data, deletes

    def read(self, sl: FileSlice, include_logs: bool = True) -> pa.Table:
        return self.read_part(SlicePart(sl), include_logs)

    def _merged(self, base: pa.Table | None, sl: FileSlice, base_keys_only: bool = False) -> pa.Table:
        """`base` (the slice's base rows, or a part of them) merged with the slice's log files."""
        data, deletes = self.read_logs(sl)
        return merge_slice(base, data, self.by_merge_key(deletes), self.ordering_field, self.schema,
                           base_keys_only=base_keys_only, key_field=self.merge_key, partial=self.partial,
                           first_value=self.first_value)

    def by_merge_key(self, deletes: LogDeletes | None) -> LogDeletes | None:
        """Delete keys typed like the merge key column."""
        if deletes is None or self.merge_key == RECORD_KEY:
            return deletes
        keys, rows = integer_keys(deletes.keys, self.schema.field(self.merge_key).type)
        return LogDeletes(keys, deletes.ordering.take(pa.array(rows, pa.int64())), deletes.natural[rows],
                          deletes.rank[rows], deletes.position[rows])

    def read_part(self, part: SlicePart, include_logs: bool = True) -> pa.Table:
        """The merged rows of one part of a slice (see hudi_ds.read.splits)."""
        sl = part.file_slice
        if part.log_only:
            merged = self._merged(None, sl)
            return merged.filter(pc.invert(pc.is_in(merged[self.merge_key], value_set=self._base_keys(sl))))
        base = self.read_base(sl, part.row_groups, keep_dictionaries=True)
        if include_logs and sl.log_files:
            merged = self._merged(base, sl, base_keys_only=part.row_groups is not None)
        else:
            merged = base if base is not None else self.schema.empty_table()
        # the dictionaries kept through the merge, expanded for the rows it kept
        return conform(merged, self.schema, sl.base_file.path if sl.base_file else sl.file_id)

    def _base_keys(self, sl: FileSlice) -> pa.Array:
        assert sl.base_file is not None
        with open_base_file(self.storage, sl.base_file.path) as pf:
            keys = pf.read(columns=[self.merge_key])[self.merge_key]
        return keys.combine_chunks().cast(self.schema.field(self.merge_key).type)


def _typed(values: pa.Array, natural: np.ndarray, typ: pa.DataType) -> pa.Array:
    """Delete ordering values as the ordering field's type; natural markers and misfits become null."""
    cleaned = pc.if_else(pa.array(natural, pa.bool_()), pa.nulls(len(values), values.type), values)
    try:
        return cleaned.cast(typ)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
        out = []
        for v in cleaned.to_pylist():
            try:
                out.append(pa.scalar(v).cast(typ).as_py())
            except (pa.ArrowInvalid, pa.ArrowNotImplementedError, pa.ArrowTypeError):
                out.append(None)
        return pa.array(out, typ)
