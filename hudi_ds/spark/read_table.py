"""`read_table(spark, path, **options)`: format("hudi-py")'s rows, with base-only file slices read by Spark itself.

Spark turns every Arrow batch a Python data source hands it into rows: even a source that only forwards parquet
batches reaches about 0.3x of Spark's built-in parquet scan. A file slice without log files to merge
(copy-on-write tables, compacted merge-on-read slices, every slice of a read-optimized query) needs no merging:
its base file holds exactly its rows, meta columns included. So the driver plans the snapshot once
(hudi_ds.read.query), scans those base files with `spark.read.parquet` in the table's schema (older files lack
new columns: null; narrower types: cast, as hudi_ds.read.conform does for Arrow), reads the slices with logs
through the "hudi-py" source pinned to the same instant, and unions the two.

Served by the "hudi-py" source alone, with the same result: incremental and change-feed queries, tables not on
local disk (Spark's parquet reader needs Hadoop's S3A jars for s3://), tables whose files hold no meta values
(hoodie.populate.meta.fields=false: the source computes them), base files other than parquet, and tables without
a commit.
"""

from __future__ import annotations

import functools
import re
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import Any

import pyarrow as pa
from pyspark.sql import DataFrame, SparkSession
from pyspark.sql import functions as F  # noqa: N812 - pyspark's own convention
from pyspark.sql.types import StructType

from hudi_ds.config.option_parsing import OPTION_SPECS, key_of
from hudi_ds.config.options import HudiOptions
from hudi_ds.files.base_file import open_base_file
from hudi_ds.read import query
from hudi_ds.spark import types
from hudi_ds.spark.batch_reader import instant_option, load_snapshot, without_meta_if_asked
from hudi_ds.spark.options import parse_spark_options
from hudi_ds.spark.source import FORMAT
from hudi_ds.storage import Storage, open_storage, require_inside
from hudi_ds.storage.storage_options import TableLocation

SLICES_KEY = key_of("read_slices")
AS_OF_KEY = key_of("as_of")
# Spark globs the paths it reads: a partition value may hold these (Hadoop's GlobPattern takes them escaped;
# Spark's option to turn globbing off, __globPaths__=false, reads every path without a glob character twice)
_GLOB = re.compile(r"([\\\[\]{}*?])")
_PINNED_KEYS = {k.lower() for s in OPTION_SPECS if s.name in ("read_slices", "as_of") for k in (s.key, *s.aliases)}


@dataclass(frozen=True)
class SplitRead:
    """A snapshot split in two: base files Spark scans itself, and whether slices with logs remain."""

    storage: Storage
    instant: str  # both halves read the table as of this instant
    schema: pa.Schema  # the table's columns at `instant`, meta columns first
    base_files: list[str]  # the base files of the slices without logs to merge (relative paths)
    merges: bool  # some slice has log files: the "hudi-py" source reads those

    @property
    def uris(self) -> list[str]:
        """The base files as absolute file:// URIs, unescaped (Hadoop quotes them itself)."""
        return ["file://" + self.storage.full(require_inside(rel, "the table's file listing"))
                for rel in self.base_files]


def plan_split(path: str, opts: HudiOptions) -> SplitRead | None:
    """The split of a snapshot or read-optimized query, or None when the "hudi-py" source serves it whole."""
    if opts.query_type == "incremental" or opts.incremental_format == "cdc" or opts.changelog_enabled:
        return None
    if not TableLocation.parse(path).is_local:
        return None
    storage = open_storage(path)
    snap = load_snapshot(storage, opts.metadata_enable is not False)
    if not snap.config.populate_meta_fields or snap.config.base_file_format != "PARQUET":
        return None
    instant = instant_option(opts.as_of, AS_OF_KEY) or max(
        (i.requested_time for i in snap.timeline.commits()), default=None)
    if instant is None:
        return None
    plan = query.plan_snapshot(snap, instant, read_optimized=opts.query_type == "read_optimized")
    bases: list[str] = []
    merges = False
    for sl in plan.slices:
        if plan.include_logs and sl.log_files:
            merges = True
        elif sl.base_file is not None:
            if not sl.base_file.name.endswith(".parquet"):
                return None
            bases.append(sl.base_file.path)
    return SplitRead(storage, instant, plan.schema, bases, merges)


def read_table(spark: SparkSession, path: str, **options: Any) -> DataFrame:
    """The rows and schema of `spark.read.format("hudi-py").options(**options).load(path)`, with the file
    slices that have no log files to merge read by Spark's own parquet scan (see the module docstring)."""
    opts = parse_spark_options(options)
    split = plan_split(str(path), opts)
    if split is None or not split.base_files:
        return spark.read.format(FORMAT).options(**options).load(str(path))
    halves = _scan_base_files(spark, split, types.spark_schema(without_meta_if_asked(opts, split.schema)))
    if split.merges:
        # the slices with logs as of the instant the driver planned
        rest = {k: v for k, v in options.items() if k.lower() not in _PINNED_KEYS}
        rest.update({SLICES_KEY: "with_logs", AS_OF_KEY: split.instant})
        halves.append(spark.read.format(FORMAT).options(**rest).load(str(path)))
    return functools.reduce(DataFrame.unionByName, halves)


def _scan_base_files(spark: SparkSession, split: SplitRead, target: StructType) -> list[DataFrame]:
    """Spark scans of the split's base files with `target`'s columns: one per way the files store them
    (usually one)."""
    with ThreadPoolExecutor(query.READ_THREADS) as pool:
        stored = list(pool.map(functools.partial(_stored_schema, split.storage), split.base_files))
    groups: dict[str, tuple[StructType, list[str]]] = {}
    for uri, schema in zip(split.uris, stored, strict=True):
        read_as = _read_schema(target, schema)
        groups.setdefault(read_as.json(), (read_as, []))[1].append(uri)
    scans = []
    for read_as, uris in groups.values():
        df = spark.read.schema(read_as).parquet(*[_GLOB.sub(r"\\\1", uri) for uri in uris])
        if read_as != target:
            df = df.select([F.col(_quoted(f.name)).cast(f.dataType).alias(f.name) for f in target.fields])
        scans.append(df)
    return scans


def _stored_schema(storage: Storage, rel: str) -> pa.Schema:
    """The Arrow schema of a base file's footer."""
    with open_base_file(storage, rel) as pf:
        return pf.schema_arrow


def _read_schema(target: StructType, stored: pa.Schema) -> StructType:
    """The schema to scan a base file with: the table's columns, each typed as the file stores it (cast to the
    table's type after the scan: int->long, float->double); a column the file lacks reads as null."""
    in_file = {f.name: f for f in types.spark_schema(pa.schema([f for f in stored if f.name in target.names]))}
    return StructType([in_file[f.name] if f.name in in_file and in_file[f.name].dataType != f.dataType else f
                       for f in target.fields])


def _quoted(name: str) -> str:
    return "`" + name.replace("`", "``") + "`"
