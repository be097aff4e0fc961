"""The "hudi-py" Spark data source: options in, core calls, Arrow out."""

from __future__ import annotations

from pyspark.sql.datasource import (
    DataSource,
    DataSourceReader,
    DataSourceStreamReader,
    DataSourceStreamWriter,
    DataSourceWriter,
)
from pyspark.sql.types import StructType

from hudi_ds.config.options import HudiOptions
from hudi_ds.errors import ConfigError
from hudi_ds.spark import types
from hudi_ds.spark.batch_reader import (
    PUSHDOWN_PER_SCAN,
    HudiBatchReader,
    HudiPushdownReader,
    load_snapshot,
    pushdown_enabled,
    read_schema,
)
from hudi_ds.spark.batch_writer import prepare_writer
from hudi_ds.spark.change_reader import ChangeFeedReader
from hudi_ds.spark.options import parse_spark_options, spark_storage_options
from hudi_ds.spark.stream_reader import HudiStreamReader, stream_schema
from hudi_ds.spark.stream_writer import HudiStreamWriter
from hudi_ds.storage import Storage, open_storage

FORMAT = "hudi-py"


class HudiDataSource(DataSource):
    """spark.read.format("hudi-py").load(path) / df.write.format("hudi-py").save(path)."""

    @classmethod
    def name(cls) -> str:
        return FORMAT

    @property
    def hudi_options(self) -> HudiOptions:
        opts = self.__dict__.get("_hudi_options")
        if opts is None:
            opts = parse_spark_options(self.options)
            self.__dict__["_hudi_options"] = opts
        return opts

    # Storage options from the session's spark.hadoop.fs.s3a.* settings; `register(spark)` fills them in a
    # subclass, since a data source is made in a Python worker that cannot see the session.
    session_storage_options: dict[str, str] = {}

    def _storage(self) -> Storage:
        storage = self.__dict__.get("_storage_")
        if storage is None:
            path = self.hudi_options.path
            if not path:
                raise ConfigError("no table path: call .load(path) / .save(path) (or set option 'path')")
            storage = open_storage(path, spark_storage_options(self.options, self.session_storage_options))
            self.__dict__["_storage_"] = storage
        return storage

    @property
    def change_feed(self) -> bool:
        opts = self.hudi_options
        return opts.incremental_format == "cdc" or opts.changelog_enabled

    def schema(self) -> StructType:
        snap = load_snapshot(self._storage())
        if snap.data_schema() is None and self.change_feed:
            raise ConfigError(
                f"the table at {self._storage().uri} has no commit yet, so the columns of its change feed are unknown; "
                "start the stream after the first commit, or give them with .schema(...)")
        if self.change_feed:
            return types.spark_schema(stream_schema(snap, cdc=True))
        return types.spark_schema(read_schema(self.hudi_options, self._storage()))

    def reader(self, schema: StructType) -> DataSourceReader:
        if self.change_feed:
            return ChangeFeedReader(self.hudi_options, self._storage(), schema)
        mode = self.hudi_options.filter_pushdown
        claims = mode == "true" or (mode == "auto" and PUSHDOWN_PER_SCAN)
        cls = HudiPushdownReader if claims and pushdown_enabled() else HudiBatchReader
        return cls(self.hudi_options, self._storage(), schema)

    def writer(self, schema: StructType, overwrite: bool) -> DataSourceWriter:
        return prepare_writer(self.hudi_options, self._storage(), schema, overwrite)

    def streamWriter(self, schema: StructType, overwrite: bool) -> DataSourceStreamWriter:  # noqa: N802
        return HudiStreamWriter(self.hudi_options, self._storage(), schema)

    def streamReader(self, schema: StructType) -> DataSourceStreamReader:  # noqa: N802
        return HudiStreamReader(self.hudi_options, self._storage(), cdc=self.change_feed,
                                target=types.arrow_schema(schema))
