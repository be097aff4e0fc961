"""What other engines read a table through: a pyarrow Dataset of the base files when no log file needs merging
(DuckDB, DataFusion and pyarrow push their filters into the parquet files themselves), a streaming Arrow
RecordBatchReader of merged file slices when some do, and a DuckDB view over the base files themselves (DuckDB's
own parquet reader is twice as fast as its scan of an Arrow dataset)."""

from __future__ import annotations

import importlib
from collections.abc import Iterator
from types import ModuleType
from typing import Any

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.fs as pafs

from hudi_ds.errors import UnsupportedTableError
from hudi_ds.files.view import FileSlice
from hudi_ds.read import query
from hudi_ds.read.lazy import SliceStream
from hudi_ds.schema.meta import META_COLUMNS
from hudi_ds.storage import Storage
from hudi_ds.storage.local import LocalStorage

EXTRAS = {"pandas": "pandas", "duckdb": "duckdb"}  # optional module -> the hudi-ds extra that installs it


def optional(module: str) -> ModuleType:
    """An engine hudi_ds does not depend on, or an ImportError that says how to install it."""
    try:
        return importlib.import_module(module)
    except ImportError as exc:
        raise ImportError(f"this needs {module}, which is not installed: pip install 'hudi-ds[{EXTRAS[module]}]' "
                          f"(or pip install {module})") from exc


class StorageFiles(pafs.FileSystemHandler):
    """The table's Storage as a read-only pyarrow file system (paths relative to the table), so a Dataset
    reads local and object-store tables alike, with the table's own credentials."""

    def __init__(self, storage: Storage) -> None:
        self.storage = storage

    def get_type_name(self) -> str:
        return "hudi-table"

    def normalize_path(self, path: str) -> str:
        return path.strip("/")

    def get_file_info(self, paths: list[str]) -> list[pafs.FileInfo]:
        out = []
        for path in paths:
            if self.storage.is_dir(path):
                out.append(pafs.FileInfo(path, pafs.FileType.Directory))
            elif self.storage.exists(path):
                out.append(pafs.FileInfo(path, pafs.FileType.File, size=self.storage.size(path)))
            else:
                out.append(pafs.FileInfo(path, pafs.FileType.NotFound))
        return out

    def get_file_info_selector(self, selector: pafs.FileSelector) -> list[pafs.FileInfo]:
        entries = self.storage.walk_files(selector.base_dir) if selector.recursive \
            else self.storage.list(selector.base_dir)
        return [pafs.FileInfo(e.path, pafs.FileType.Directory if e.is_dir else pafs.FileType.File,
                              size=None if e.is_dir else e.size) for e in entries]

    def open_input_file(self, path: str) -> pa.NativeFile:
        return self.storage.open_input(path)

    def open_input_stream(self, path: str) -> pa.NativeFile:
        return self.storage.open_input(path)

    def _read_only(self, *_: object) -> None:
        raise OSError(f"{self.storage.uri} is opened read-only through pyarrow: write with HudiTable.write()")

    create_dir = delete_dir = delete_dir_contents = delete_root_dir_contents = delete_file = _read_only
    move = copy_file = open_output_stream = open_append_stream = _read_only


def base_file_dataset(plan: query.ReadPlan) -> ds.FileSystemDataset:
    """The plan's base files as one parquet Dataset of the table's schema; refused when a slice has log files
    whose records a parquet reader would miss."""
    merging = needs_merging(plan)
    if merging:
        first = merging[0]
        raise UnsupportedTableError(
            f"{len(merging)} of the {len(plan.slices)} file slices have log files to merge (the first: "
            f"{first.partition or '(table root)'}/{first.file_id}), which a parquet dataset would leave out. Read "
            "the merged rows with scan() (polars), to_batch_reader() (a streaming Arrow reader DuckDB can query) "
            "or to_batches(); or compact the table first (HudiTable.compact(), `hudi-py compact PATH`); or "
            "read the base files alone with read_optimized=True")
    return ds.FileSystemDataset.from_paths(base_paths(plan), schema=file_schema(plan), format=ds.ParquetFileFormat(),
                                           filesystem=dataset_filesystem(plan.reader.storage))


def needs_merging(plan: query.ReadPlan) -> list[FileSlice]:
    """The plan's slices whose log files hold records a parquet reader of the base file would miss."""
    return [sl for sl in plan.slices if plan.include_logs and sl.log_files]


def file_schema(plan: query.ReadPlan) -> pa.Schema:
    """The columns the base files give: the table's, less the meta columns of a table written without them."""
    schema = plan.schema
    if plan.reader.synthesize_meta:
        schema = pa.schema([f for f in schema if f.name not in META_COLUMNS], metadata=schema.metadata)
    return schema


def base_paths(plan: query.ReadPlan) -> list[str]:
    return [sl.base_file.path for sl in plan.slices if sl.base_file is not None]


def duckdb_relation(plan: query.ReadPlan, connection: Any, name: str) -> Any:
    """Register the plan's rows in a DuckDB connection (DuckDB's default one, which `duckdb.sql` queries, when
    None) under `name`: a view over DuckDB's read_parquet of the base files on a local table with nothing to
    merge (DuckDB prunes row groups and parallelises itself), the base files as an Arrow dataset on an object
    store (DuckDB reaches it with the table's credentials), and the merged snapshot as an Arrow table where log
    files must be merged."""
    duckdb = optional("duckdb")
    con = connection if connection is not None else default_duckdb(duckdb)
    con.unregister(name)  # what an earlier call registered under the name, Arrow object or view
    con.execute(f"DROP VIEW IF EXISTS {sql_name(name)}")
    if needs_merging(plan):
        con.register(name, plan.read_all())
        return con
    storage = plan.reader.storage
    paths = base_paths(plan)
    schema = file_schema(plan)
    if not isinstance(storage, LocalStorage) or not paths:
        con.register(name, ds.FileSystemDataset.from_paths(
            paths, schema=schema, format=ds.ParquetFileFormat(), filesystem=dataset_filesystem(storage)))
        return con
    files = "[" + ", ".join(sql_string(storage.full(p)) for p in paths) + "]"
    source = f"read_parquet({files}, union_by_name = true)"
    types = con.from_arrow(schema.empty_table()).types  # the table's schema in DuckDB's types
    try:
        con.execute(parquet_view(name, schema, types, source, None))
    except duckdb.BinderException:  # a column no base file has yet (added, never compacted in): nulls
        present = {row[0] for row in con.sql(f"DESCRIBE SELECT * FROM {source}").fetchall()}
        con.execute(parquet_view(name, schema, types, source, present))
    return con


def default_duckdb(duckdb: ModuleType) -> Any:
    connection = duckdb.default_connection  # a function since DuckDB 1.2, the connection before
    return connection() if callable(connection) else connection


def parquet_view(name: str, schema: pa.Schema, types: list[Any], source: str, present: set[str] | None) -> str:
    """The view's SQL: the table's columns in its order and types, nulls for those not in `present` (when known)."""
    columns = ", ".join(
        (f"CAST({sql_name(f.name)} AS {t})" if present is None or f.name in present else f"CAST(NULL AS {t})")
        + f" AS {sql_name(f.name)}" for f, t in zip(schema, types, strict=True))
    return f"CREATE TEMP VIEW {sql_name(name)} AS SELECT {columns} FROM {source}"


def sql_string(text: str) -> str:
    return "'" + text.replace("'", "''") + "'"


def sql_name(text: str) -> str:
    return '"' + text.replace('"', '""') + '"'


def dataset_filesystem(storage: Storage) -> pafs.FileSystem:
    """The file system a Dataset reads the table's files through, paths relative to the table: pyarrow's own
    local file system for a table on disk (its reads never enter Python, so engines scan files in parallel);
    the table's Storage, credentials and all, for an object store."""
    if isinstance(storage, LocalStorage):
        return pafs.SubTreeFileSystem(storage.base, storage.fs)
    return pafs.PyFileSystem(StorageFiles(storage))


def batch_reader(stream: SliceStream) -> pa.RecordBatchReader:
    """The stream's rows as a RecordBatchReader that reads one merged file slice at a time."""
    schema = stream.plan.output_schema

    def batches() -> Iterator[pa.RecordBatch]:
        for table in stream.tables(ahead=1):
            yield from (table if table.schema.equals(schema) else table.cast(schema)).to_batches()

    return pa.RecordBatchReader.from_batches(schema, batches())

