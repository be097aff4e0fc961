"""What Spark's Python Data Source API itself costs, with no Hudi logic: the floor under any connector in Python.

`hudi-py-floor` reads given parquet files with pyarrow and yields their Arrow batches (sized and cast to Spark's
schema the way the hudi-py reader does); `hudi-py-floor-sink` takes every batch Spark sends a Python writer (batch or
streaming) and discards it, counting rows. Timing them beside the built-in parquet source and the hudi-py steps shows how much of
a gap to the built-in figures is the API (rows cross from the JVM to a Python worker and back as Arrow, strings
are converted row by row on the JVM side, no column pruning) and how much is ours.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.parquet as pq
from pyspark.sql.datasource import (
    DataSource,
    DataSourceArrowWriter,
    DataSourceReader,
    DataSourceStreamArrowWriter,
    InputPartition,
    WriterCommitMessage,
)
from pyspark.sql.types import StructType

from hudi_ds.spark import types


class FloorSource(DataSource):
    """Options: `files` (JSON list of parquet paths), `columns` (comma-separated, default all), `partitions`."""

    @classmethod
    def name(cls) -> str:
        return "hudi-py-floor"

    def _files(self) -> list[str]:
        return list(json.loads(self.options["files"]))

    def _arrow_schema(self) -> pa.Schema:
        schema = pq.read_schema(self._files()[0])
        columns = self.options.get("columns")
        if columns:
            schema = pa.schema([schema.field(c) for c in columns.split(",")])
        return schema

    def schema(self) -> StructType:
        return types.spark_schema(self._arrow_schema())

    def reader(self, schema: StructType) -> DataSourceReader:
        return FloorReader(self._files(), self._arrow_schema().names, types.arrow_schema(schema),
                           int(self.options.get("partitions", "2")))


class FloorReader(DataSourceReader):
    def __init__(self, files: list[str], columns: list[str], target: pa.Schema, partitions: int) -> None:
        self.files, self.columns, self.target, self.n = files, columns, target, partitions

    def partitions(self) -> list[InputPartition]:
        return [InputPartition(self.files[i::self.n]) for i in range(min(self.n, len(self.files)))]

    def read(self, partition: InputPartition) -> Iterator[pa.RecordBatch]:
        for path in partition.value:
            yield from types.batches(pq.read_table(path, columns=self.columns), self.target)


class FloorSink(DataSource):
    """Option `path`: a file the driver writes the number of rows the tasks received to."""

    @classmethod
    def name(cls) -> str:
        return "hudi-py-floor-sink"

    def writer(self, schema: StructType, overwrite: bool) -> FloorWriter:
        return FloorWriter(self.options["path"])

    def streamWriter(self, schema: StructType, overwrite: bool) -> FloorStreamWriter:  # noqa: N802 - Spark's name
        return FloorStreamWriter(self.options["path"])


class CountMessage(WriterCommitMessage):
    def __init__(self, rows: int) -> None:
        self.rows = rows


class FloorWriter(DataSourceArrowWriter):
    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, iterator: Iterator[pa.RecordBatch]) -> CountMessage:
        return CountMessage(sum(batch.num_rows for batch in iterator))

    def commit(self, messages: list[Any]) -> None:
        Path(self.path).write_text(str(sum(m.rows for m in messages if isinstance(m, CountMessage))))


class FloorStreamWriter(DataSourceStreamArrowWriter):
    """Each micro-batch: the rows counted, nothing kept; the driver adds each batch's count to the file."""

    def __init__(self, path: str) -> None:
        self.path = path

    def write(self, iterator: Iterator[pa.RecordBatch]) -> CountMessage:
        return CountMessage(sum(batch.num_rows for batch in iterator))

    def commit(self, messages: list[Any], batchId: int) -> None:  # noqa: N803 - Spark's name
        done = int(Path(self.path).read_text()) if Path(self.path).exists() else 0
        Path(self.path).write_text(str(done + sum(m.rows for m in messages if isinstance(m, CountMessage))))


def register(spark: Any) -> None:
    """Register both sources; workers get this module by value (benchmarks/ is not on their path)."""
    import sys

    from pyspark import cloudpickle

    cloudpickle.register_pickle_by_value(sys.modules[__name__])
    spark.dataSource.register(FloorSource)
    spark.dataSource.register(FloorSink)


def source_files(table: Path) -> list[str]:
    """The parquet files under `table`, Hudi's metadata folder excluded."""
    return sorted(str(p) for p in table.rglob("*.parquet") if ".hoodie" not in p.parts)
