"""Spark batch writes and reads through format("hudi-py"), checked against the core reader, hudi-rs and a model."""

from __future__ import annotations

import os
import random
from typing import Any

import pyarrow as pa
import pytest
from model import DictModel
from tables import REFERENCE_DIR, assert_same_rows, hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.cli.validate import validate
from hudi_ds.index.bucket import bucket_ids, bucket_ids_from_columns
from hudi_ds.spark import cluster_by_bucket
from hudi_ds.spark.cluster import with_bucket_column

pytestmark = [pytest.mark.spark, pytest.mark.interop]

SCHEMA = pa.schema([("id", pa.string()), ("num", pa.int64()), ("name", pa.string()), ("amount", pa.float64()),
                    ("ts", pa.int64()), ("dt", pa.string())])
COLUMNS = SCHEMA.names
META = ["_hoodie_commit_time", "_hoodie_commit_seqno", "_hoodie_record_key", "_hoodie_partition_path",
        "_hoodie_file_name"]
DTS = ["2024-01-01", "2024-01-02", "2024-01-03"]


def make(ids: list[int], ts: int, rng: random.Random | None = None) -> pa.Table:
    rng = rng or random.Random(ts)
    return pa.Table.from_pylist(
        [{"id": f"k{i:04d}", "num": i, "name": f"n{i}-{ts}", "amount": round(rng.random() * 100, 2), "ts": ts,
          "dt": DTS[i % 3]} for i in ids], schema=SCHEMA)


def options(table_type: str = "MERGE_ON_READ", partitioned: bool = True, **extra: str) -> dict[str, str]:
    opts = {
        "hoodie.table.name": "spark_t",
        "hoodie.datasource.write.recordkey.field": "id",
        "hoodie.datasource.write.precombine.field": "ts",
        "hoodie.datasource.write.table.type": table_type,
        "hoodie.bucket.index.num.buckets": "4",  # not 3: with keys k0000.. the Java hash mod 3 follows i % 3
    }
    if partitioned:
        opts["hoodie.datasource.write.partitionpath.field"] = "dt"
    opts.update(extra)
    return opts


def write(spark: Any, data: pa.Table, path: str, opts: dict[str, str], operation: str | None = None,
          mode: str = "append", cluster: bool = True, tasks: int = 2) -> None:
    df = spark.createDataFrame(data).repartition(tasks)
    if cluster:
        df = cluster_by_bucket(df, {**opts, "path": path}, num_partitions=2)
    w = df.write.format("hudi-py").options(**opts)
    if operation:
        w = w.option("hoodie.datasource.write.operation", operation)
    w.mode(mode).save(path)


def read(spark: Any, path: str, **opts: str) -> pa.Table:
    return spark.read.format("hudi-py").options(**opts).load(path).toArrow()


def check(spark: Any, path: str, model: DictModel) -> pa.Table:
    ours = read(spark, path)
    assert ours.schema.names == META + COLUMNS
    assert rows(ours, COLUMNS) == model.sorted_rows(COLUMNS)
    assert_same_rows(ours, HudiTable(path).to_arrow(), META + COLUMNS)
    assert_same_rows(ours, hudi_rs(path), COLUMNS + ["_hoodie_record_key", "_hoodie_partition_path"])
    return ours


@pytest.mark.parametrize("partitioned, table_type, version", [
    (True, "MERGE_ON_READ", 6), (False, "MERGE_ON_READ", 6), (True, "COPY_ON_WRITE", 6),
    (False, "COPY_ON_WRITE", 6), (True, "MERGE_ON_READ", 9), (False, "COPY_ON_WRITE", 9)])
def test_every_operation_end_to_end(spark, table_path, table_type, partitioned, version):
    opts = options(table_type, partitioned, **{"hoodie.write.table.version": str(version)})
    model = DictModel("id", "ts", "dt" if partitioned else None)

    first = make(list(range(60)), 1)
    write(spark, first, table_path, opts, "insert")
    model.upsert(first.to_pylist())
    check(spark, table_path, model)

    upserts = pa.concat_tables([make(list(range(40, 90)), 2), make([45], 3)])  # a duplicate key: ts 3 wins
    write(spark, upserts, table_path, opts)  # upsert is the default operation
    model.upsert(upserts.to_pylist())
    check(spark, table_path, model)

    deletes = make(list(range(0, 10)), 0).select(["id", "dt"])  # no ordering column: deletes always apply
    write(spark, deletes, table_path, opts, "delete")
    model.delete([{**r, "ts": 0} for r in deletes.to_pylist()])
    check(spark, table_path, model)

    bulk = make(list(range(200, 230)), 1)
    write(spark, bulk, table_path, opts, "bulk_insert")
    model.upsert(bulk.to_pylist())
    check(spark, table_path, model)

    one_partition = make([300 + 3 * i for i in range(10)], 4)  # all in DTS[0]
    write(spark, one_partition, table_path, opts, "insert_overwrite")
    model.overwrite(one_partition.to_pylist(), whole_table=not partitioned)
    check(spark, table_path, model)

    final = make(list(range(400, 420)), 5)
    write(spark, final, table_path, opts, mode="overwrite")  # mode("overwrite") = insert_overwrite_table
    model.overwrite(final.to_pylist(), whole_table=True)
    check(spark, table_path, model)
    assert [i.action for i in HudiTable(table_path).timeline()][-1] == "replacecommit"
    assert HudiTable(table_path).config.version == version
    # hoodie.metadata.enable defaults to true on version 8/9 tables (hudi-rs read through it in `check`)
    assert HudiTable(table_path).config.metadata_partitions == (["files"] if version >= 8 else [])
    assert validate(table_path)["ok"]


def test_unclustered_input_mor(spark, table_path):
    """Spark partitions as they come: several tasks hit the same buckets; MOR takes that in one commit."""
    opts = options()
    model = DictModel("id", "ts", "dt")
    for ts, ids in [(1, range(0, 300)), (2, range(100, 400))]:
        data = make(list(ids), ts)
        write(spark, data, table_path, opts, cluster=False)
        model.upsert(data.to_pylist())
    check(spark, table_path, model)


def one_base_file_per_group_and_commit(path: str) -> None:
    """Copy-on-write: every commit wrote at most one base file per file group, and `hudi-py validate` is clean."""
    from collections import Counter
    from pathlib import Path

    from hudi_ds.cli.validate import validate
    from hudi_ds.files.naming import parse_base_file

    names = [parse_base_file("", p.name) for p in Path(path).rglob("*.parquet") if ".hoodie" not in p.parts]
    versions = Counter((f.file_id, f.instant) for f in names if f is not None)
    assert versions and set(versions.values()) == {1}
    report = validate(path)
    assert report["ok"] and not report["warnings"], report["errors"] + report["warnings"]


@pytest.mark.parametrize("partitioned", [True, False], ids=["partitioned", "nonpartitioned"])
def test_unclustered_cow_writes(spark, table_path, partitioned):
    """COW rows of one bucket spread over several tasks (round-robin partitions, not clustered by bucket): the
    first write creates every bucket from three tasks, later ones update, insert and delete existing buckets;
    the coordinator merges each file group into one new base file."""
    opts = options("COPY_ON_WRITE", partitioned)
    model = DictModel("id", "ts", "dt" if partitioned else None)
    first = make(list(range(90)), 1)
    write(spark, first, table_path, opts, cluster=False, tasks=3)
    model.upsert(first.to_pylist())
    check(spark, table_path, model)
    upserts = make(list(range(60, 150)), 2)  # 30 updates, 60 inserts
    write(spark, upserts, table_path, opts, cluster=False, tasks=3)
    model.upsert(upserts.to_pylist())
    check(spark, table_path, model)
    deletes = make(list(range(0, 30, 2)), 0).select(["id", "dt"])
    write(spark, deletes, table_path, opts, "delete", cluster=False, tasks=3)
    model.delete([{**r, "ts": 0} for r in deletes.to_pylist()])
    check(spark, table_path, model)
    changes = [("update_postimage", r) for r in make(list(range(100, 130)), 3).to_pylist()]
    changes += [("insert", r) for r in make(list(range(150, 170)), 3).to_pylist()]
    changes += [("delete", r) for r in make(list(range(31, 60, 2)), 3).to_pylist()]
    opts_cl = {**opts, "hoodie.datasource.write.changelog.column": "_change_type"}
    write(spark, pa.Table.from_pylist([{**r, "_change_type": k} for k, r in changes]), table_path, opts_cl,
          cluster=False, tasks=3)
    model.upsert([r for k, r in changes if k != "delete"])
    model.delete([r for k, r in changes if k == "delete"])
    check(spark, table_path, model)
    one_base_file_per_group_and_commit(table_path)
    stats = HudiTable(table_path).load_timeline().commit_metadata(HudiTable(table_path).timeline()[-1]).write_stats()
    assert sum(s.num_update_writes for s in stats) == 30 and sum(s.num_inserts for s in stats) == 20
    assert sum(s.num_deletes for s in stats) == 15 and len({s.file_id for s in stats}) == len(stats)


def test_unclustered_cow_into_existing_clustered_table(spark, table_path):
    """A table written clustered, then one bucket's rows from several tasks (a single-bucket table)."""
    opts = options("COPY_ON_WRITE", partitioned=False, **{"hoodie.bucket.index.num.buckets": "1"})
    model = DictModel("id", "ts")
    first = make(list(range(20)), 1)
    write(spark, first, table_path, opts)
    model.upsert(first.to_pylist())
    second = make(list(range(10, 40)), 2)
    write(spark, second, table_path, opts, cluster=False, tasks=3)
    model.upsert(second.to_pylist())
    check(spark, table_path, model)
    one_base_file_per_group_and_commit(table_path)


def test_unclustered_cow_stream(spark, tmp_path):
    """The streaming sink on copy-on-write, micro-batches spread over three tasks: each batch's file groups get
    one base file, with upserts and changelog deletes merged from every task."""
    import pyarrow.parquet as pq

    src, path = tmp_path / "src", str(tmp_path / "t")
    src.mkdir()
    model = DictModel("id", "ts", "dt")
    batches = []
    for ts, ids in [(1, range(0, 60)), (2, range(30, 90)), (3, range(50, 70))]:
        kinds = ["delete" if ts == 3 and i % 2 else "insert" for i in ids]
        batches.append(make(list(ids), ts).append_column("_change_type", pa.array(kinds)))
    for i, b in enumerate(batches):
        pq.write_table(b, src / f"{i:03d}.parquet")
        os.utime(src / f"{i:03d}.parquet", (1_700_000_000 + i, 1_700_000_000 + i))  # Spark reads by mtime
    df = spark.readStream.schema(spark.createDataFrame(batches[0]).schema).option("maxFilesPerTrigger", 1) \
        .parquet(str(src))
    q = (df.repartition(3).writeStream.format("hudi-py").options(**options("COPY_ON_WRITE"))
         .option("hoodie.datasource.write.changelog.column", "_change_type")
         .option("checkpointLocation", str(tmp_path / "ck")).trigger(availableNow=True).start(path))
    q.awaitTermination()
    assert q.exception() is None
    for b in batches:
        rs = b.to_pylist()
        model.upsert([r for r in rs if r["_change_type"] == "insert"])
        model.delete([r for r in rs if r["_change_type"] == "delete"])
    check(spark, path, model)
    one_base_file_per_group_and_commit(path)
    assert len([i for i in HudiTable(path).timeline() if i.action == "commit"]) == 3


@pytest.mark.parametrize("style", ["spark_cdf", "debezium"])
def test_changelog_input(spark, table_path, style):
    opts = options()
    model = DictModel("id", "ts", "dt")
    base = make(list(range(20)), 1)
    write(spark, base, table_path, opts)
    model.upsert(base.to_pylist())
    kinds = {"spark_cdf": ("insert", "update_preimage", "update_postimage", "delete", "_change_type"),
             "debezium": ("c", None, "u", "d", "op")}[style]
    ins, pre, post, dele, column = kinds
    changes = [(ins, r) for r in make(list(range(20, 25)), 2).to_pylist()]
    if pre:  # a pre-image with a high ordering value: dropped, so it must not win
        changes.append((pre, {**make([1], 99).to_pylist()[0], "name": "pre-image"}))
    changes.append((post, make([1], 2).to_pylist()[0]))
    changes.append((dele, make([2], 2).to_pylist()[0]))
    if style == "debezium":
        changes.append(("r", make([3], 2).to_pylist()[0]))
    table = pa.Table.from_pylist([{**r, column: k} for k, r in changes])
    opts_cl = {**opts, "hoodie.datasource.write.changelog.column": column}
    write(spark, table, table_path, opts_cl)
    model.upsert([r for k, r in changes if k in ("insert", "update_postimage", "c", "u", "r")])
    model.delete([r for k, r in changes if k in ("delete", "d")])
    ours = check(spark, table_path, model)
    assert column not in ours.column_names
    assert len(HudiTable(table_path).timeline()) == 2  # one commit for upserts and deletes together


@pytest.fixture(scope="module")
def history(spark, tmp_path_factory) -> dict[str, Any]:
    """A MOR table with three commits: insert, upsert (logs), delete."""
    path = str(tmp_path_factory.mktemp("history") / "t")
    opts = options()
    write(spark, make(list(range(60)), 1), path, opts, "insert")
    write(spark, make(list(range(30, 80)), 2), path, opts)
    write(spark, make(list(range(0, 5)), 3).select(["id", "dt", "ts"]), path, opts, "delete")
    commits = [i.requested_time for i in HudiTable(path).timeline() if i.action == "deltacommit"]
    assert len(commits) == 3
    return {"path": path, "commits": commits}


def test_time_travel(spark, history):
    path, commits = history["path"], history["commits"]
    for instant in commits:
        ours = read(spark, path, **{"as.of.instant": instant})
        assert_same_rows(ours, HudiTable(path).to_arrow(as_of=instant), META + COLUMNS)
        assert_same_rows(ours, hudi_rs(path, as_of=instant), COLUMNS)
    assert read(spark, path, **{"as.of.instant": commits[0]}).num_rows == 60


def test_incremental(spark, history):
    path, commits = history["path"], history["commits"]
    ours = read(spark, path, **{"hoodie.datasource.query.type": "incremental",
                                "hoodie.datasource.read.begin.instanttime": commits[0],
                                "hoodie.datasource.read.end.instanttime": commits[1]})
    expected = HudiTable(path).incremental(commits[0], commits[1])
    assert_same_rows(ours, expected, META + COLUMNS)
    assert sorted(set(ours["_hoodie_commit_time"].to_pylist())) == [commits[1]]
    assert ours.num_rows == 50
    # Flink's option names, open end
    flink = read(spark, path, **{"hoodie.datasource.query.type": "incremental", "read.start-commit": "earliest"})
    assert_same_rows(flink, HudiTable(path).incremental("0"), META + COLUMNS)


def test_read_optimized(spark, history):
    path = history["path"]
    ours = read(spark, path, **{"hoodie.datasource.query.type": "read_optimized"})
    assert_same_rows(ours, HudiTable(path).to_arrow(read_optimized=True), META + COLUMNS)
    assert_same_rows(ours, hudi_rs(path, read_optimized=True), COLUMNS)
    assert ours.num_rows == 60 and set(ours["ts"].to_pylist()) == {1}


def _scan_partitions(df: Any) -> int:
    return df._jdf.queryExecution().executedPlan().execute().getNumPartitions()


def test_filter_pushdown_prunes_partitions(spark, history):
    path = history["path"]
    full = HudiTable(path).to_arrow()
    on = {"hoodie.datasource.read.filter.pushdown": "true", "hoodie.datasource.read.split.max.bytes": "1"}

    def load() -> Any:  # a fresh DataFrame per query (see the filter.pushdown option's doc)
        return spark.read.format("hudi-py").options(**on).load(path)

    everything = _scan_partitions(load())  # one Spark partition per file slice (split.max.bytes=1)
    pruned = load().filter("dt = '2024-01-02'")
    assert _scan_partitions(pruned) * 3 == everything >= 9
    assert rows(pruned.toArrow(), COLUMNS) == rows(full.filter(pa.compute.field("dt") == "2024-01-02"), COLUMNS)
    cases = {
        "num > 50 AND dt IN ('2024-01-01', '2024-01-03')": lambda r: r["num"] > 50 and r["dt"] != "2024-01-02",
        "dt <> '2024-01-01' AND id <= 'k0040'": lambda r: r["dt"] != "2024-01-01" and r["id"] <= "k0040",
        "NOT dt IN ('2024-01-01') AND num >= 70": lambda r: r["dt"] != "2024-01-01" and r["num"] >= 70,
        "amount > 50.0 OR num < 10": lambda r: r["amount"] > 50.0 or r["num"] < 10,  # stays with Spark
        "name LIKE 'n3%'": lambda r: r["name"].startswith("n3"),
    }
    for sql, keep in cases.items():
        got = load().filter(sql).toArrow()
        want = [r for r in full.to_pylist() if keep(r)]
        assert rows(got, COLUMNS) == rows(pa.Table.from_pylist(want, schema=full.schema), COLUMNS), sql


def test_reads_with_pushdown_disabled(spark, history):
    path = history["path"]
    key = "spark.sql.python.filterPushdown.enabled"
    spark.conf.set(key, "false")
    try:
        for mode in ("auto", "true", "false"):
            df = spark.read.format("hudi-py").option("hoodie.datasource.read.filter.pushdown", mode).load(path)
            assert df.filter("dt = '2024-01-02'").count() == HudiTable(path).to_arrow(
                filters=[("dt", "=", "2024-01-02")]).num_rows
    finally:
        spark.conf.set(key, "true")


def test_default_pushdown_is_safe_to_reuse(spark, history):
    """pyspark 4.1-4.3 reuse a relation's pushdown plan for later scans of the same DataFrame."""
    path = history["path"]
    df = spark.read.format("hudi-py").load(path)
    total = df.count()
    assert df.filter("dt = '2024-01-02'").count() < total
    assert df.count() == total == HudiTable(path).to_arrow().num_rows


def test_cluster_by_bucket_matches_core_hash(spark):
    rng = random.Random(7)
    alphabet = "abcXYZ019 -_:.éßÿĀ中文한😀\U0001f9ea"
    keys = sorted({"".join(rng.choice(alphabet) for _ in range(rng.randint(1, 16))) for _ in range(3000)})
    keys = [k for k in keys if "," not in k]
    data = pa.table({"id": keys, "num": list(range(len(keys))), "dt": [DTS[i % 3] for i in range(len(keys))]})
    df = spark.createDataFrame(data)
    single = with_bucket_column(df, {"hoodie.datasource.write.recordkey.field": "id",
                                     "hoodie.bucket.index.num.buckets": "13"}).toArrow()
    assert single["_bucket"].to_pylist() == bucket_ids(single["id"], 13).tolist()
    composite = with_bucket_column(df, {"hoodie.datasource.write.recordkey.field": "id,num",
                                        "hoodie.bucket.index.num.buckets": "7"}).toArrow()
    assert composite["_bucket"].to_pylist() == bucket_ids_from_columns(
        [composite["id"], composite["num"]], 7).tolist()
    # every (partition, bucket) group lands in exactly one Spark partition
    from pyspark.sql import functions as F

    opts = {"hoodie.datasource.write.recordkey.field": "id", "hoodie.datasource.write.partitionpath.field": "dt",
            "hoodie.bucket.index.num.buckets": "13"}
    clustered = with_bucket_column(cluster_by_bucket(df, opts, num_partitions=5), opts)
    clustered = clustered.withColumn("pid", F.spark_partition_id())
    spread = clustered.groupBy("dt", "_bucket").agg(F.countDistinct("pid").alias("n"))
    assert spread.agg(F.max("n")).first()[0] == 1


def test_small_slices_share_partitions(spark, history):
    path = history["path"]
    packed = spark.read.format("hudi-py").option("hoodie.datasource.read.min.partitions", "2").load(path)
    assert _scan_partitions(packed) == 2
    assert_same_rows(packed.toArrow(), HudiTable(path).to_arrow(), META + COLUMNS)


def test_read_splits_large_base_files_by_row_group(spark, table_path):
    import glob

    import pyarrow.parquet as pq

    data = make(list(range(3000)), 1)
    table = HudiTable.create(table_path, table_name="spark_t", record_key="id", ordering_field="ts",
                             table_type="COPY_ON_WRITE", buckets=1)
    table.write(data, "insert")
    [base] = glob.glob(f"{table_path}/*.parquet")
    pf = pq.ParquetFile(base)  # same rows and footer metadata, rewritten as 6 row groups
    content, metadata = pf.read(), pf.schema_arrow.metadata
    pq.write_table(content.replace_schema_metadata(metadata), base, row_group_size=500, store_schema=False)
    assert pq.ParquetFile(base).metadata.num_row_groups == 6
    df = spark.read.format("hudi-py").option("hoodie.datasource.read.split.max.bytes", "1").load(table_path)
    assert _scan_partitions(df) == 6
    assert rows(df.toArrow(), META + COLUMNS) == rows(table.to_arrow(), META + COLUMNS)
    assert rows(df.toArrow(), COLUMNS) == rows(data, COLUMNS)


def test_read_splits_slices_with_logs_by_rows(spark, table_path):
    from test_splits import rewrite_with_row_groups

    table = HudiTable.create(table_path, table_name="spark_t", record_key="id", ordering_field="ts", buckets=1)
    table.write(make(list(range(3000)), 1), "insert")
    rewrite_with_row_groups(table_path, 500)
    table.write(make(list(range(2500, 3500)), 2))  # 500 updates, 500 new keys: a log to merge
    table.write(make(list(range(0, 300, 3)), 3), "delete")
    df = (spark.read.format("hudi-py").option("hoodie.datasource.read.split.max.rows", "1000")
          .option("hoodie.datasource.read.min.partitions", "8").load(table_path))
    assert _scan_partitions(df) == 4  # three base parts of 1,000 rows and one log-only part
    assert rows(df.toArrow(), META + COLUMNS) == rows(table.to_arrow(), META + COLUMNS)
    assert rows(df.toArrow(), META + COLUMNS) == rows(hudi_rs(table_path), META + COLUMNS)
    assert df.count() == 3500 - 100


def test_read_schema_names_the_columns_to_read(spark, table_path):
    table = HudiTable.create(table_path, table_name="spark_t", record_key="id", ordering_field="ts",
                             partition_by="dt", buckets=2)
    table.write(make(list(range(300)), 1))
    table.write(make(list(range(0, 400, 2)), 2))  # updates and inserts in log files
    table.write(make(list(range(0, 300, 7)), 3), "delete")
    first = table.timeline()[0].requested_time
    df = spark.read.format("hudi-py").schema("amount double, num long, missing string").load(table_path)
    assert df.columns == ["amount", "num", "missing"]
    expected = table.to_arrow()
    assert rows(df.toArrow(), ["amount", "num"]) == rows(expected, ["amount", "num"])
    assert df.filter("missing IS NOT NULL").count() == 0
    incr = (spark.read.format("hudi-py").schema("num long").option("hoodie.datasource.query.type", "incremental")
            .option("hoodie.datasource.read.begin.instanttime", first).load(table_path))
    assert rows(incr.toArrow(), ["num"]) == rows(table.incremental(first), ["num"])


def test_spark_types_round_trip(spark, table_path):
    df = spark.sql("""
        SELECT cast(id AS string) AS id, cast(id AS tinyint) AS b, cast(id AS smallint) AS s, cast(id AS int) AS i,
          id AS l, cast(id AS float) AS f, cast(id AS double) AS d, cast(id AS decimal(10, 2)) AS dec,
          date'2024-01-01' + cast(id AS int) AS day, timestamp'2024-01-01 10:00:00' + make_interval(0, 0, 0, 0, 0, 0, id)
          AS ts, timestamp_ntz'2024-01-01 10:00:00' AS tsn, id % 2 = 0 AS flag, cast(concat('x', id) AS binary) AS bin,
          array(id, id + 1) AS arr, map('a', cast(id AS int)) AS m, named_struct('x', id, 'y', cast(id AS string)) AS st
        FROM range(10)""")
    df.write.format("hudi-py").option("hoodie.datasource.write.recordkey.field", "id").mode("append").save(table_path)
    back = spark.read.format("hudi-py").load(table_path)
    assert back.columns == META + df.columns
    assert [f.dataType.simpleString() for f in back.schema.fields[5:]] == [f.dataType.simpleString() for f in df.schema]
    assert sorted(back.select(*df.columns).collect()) == sorted(df.collect())


def test_changelog_versions_of_a_key_in_several_tasks(spark, table_path):
    """A merge-on-read changelog write that does not keep a key's rows in one task (round-robin over three
    tasks): the version with the highest ordering value wins, a delete included, whatever the order in which
    the tasks' log files fold (hudi_ds.write.cross_task)."""
    opts = options("MERGE_ON_READ")
    model = DictModel("id", "ts", "dt", merge_on_read=True)
    first = make(list(range(60)), 1)
    write(spark, first, table_path, opts)
    model.upsert(first.to_pylist())
    rng = random.Random(5)
    changes, winners = [], {}
    for i in range(60):
        versions = [(rng.choice(["update_postimage", "delete"]), ts) for ts in rng.sample(range(2, 9), 3)]
        for kind, ts in versions:
            changes.append({**make([i], ts).to_pylist()[0], "_change_type": kind})
        winners[i] = max(versions, key=lambda v: v[1])
    rng.shuffle(changes)
    opts_cl = {**opts, "hoodie.datasource.write.changelog.column": "_change_type"}
    write(spark, pa.Table.from_pylist(changes), table_path, opts_cl, cluster=False, tasks=3)
    assert len({(r["num"], r["ts"]) for r in changes}) == 180  # one version per (key, ordering value)
    model.upsert([{k: v for k, v in r.items() if k != "_change_type"} for r in changes
                  if winners[r["num"]] == (r["_change_type"], r["ts"]) and r["_change_type"] != "delete"])
    model.delete([r for r in changes if winners[r["num"]] == ("delete", r["ts"])])
    check(spark, table_path, model)


def test_read_without_meta_columns(spark, table_path):
    """hoodie.datasource.read.meta.columns=false: the data columns only, the same rows (merge-on-read with
    logs, so merging still needs the record key it no longer returns), in format("hudi-py") and read_table."""
    from hudi_ds.spark import read_table

    opts = options("MERGE_ON_READ")
    write(spark, make(list(range(40)), 1), table_path, opts)
    write(spark, make(list(range(20, 60)), 2), table_path, opts, cluster=False, tasks=3)
    full = read(spark, table_path)
    lean = read(spark, table_path, **{"hoodie.datasource.read.meta.columns": "false"})
    assert lean.schema.names == COLUMNS
    assert rows(lean, COLUMNS) == rows(full, COLUMNS)
    fast = read_table(spark, table_path, **{"hoodie.datasource.read.meta.columns": "false"}).toArrow()
    assert fast.schema.names == COLUMNS and rows(fast, COLUMNS) == rows(full, COLUMNS)


def test_reads_take_the_listing_from_the_metadata_table(spark, tmp_path):
    """A version 9 table with the metadata table, and a copy of a committed base file under a new file group
    (never committed): Spark reads through the metadata table and does not see it, as hudi-rs and the Python API;
    `hoodie.metadata.enable=false` on the read lists the partition and sees its rows a second time."""
    import shutil

    path = str(tmp_path / "t")
    t = HudiTable.create(path, table_name="t", record_key="id", ordering_field="ts", partition_by="dt", buckets=2,
                         options={"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true"})
    t.write(make(list(range(30)), 1))
    base = next(p for p in (tmp_path / "t" / DTS[0]).iterdir() if p.suffix == ".parquet")
    file_id, rest = base.name.split("_", 1)
    shutil.copyfile(base, base.with_name(f"{file_id[:-8]}deadbeef-0_{rest}"))
    expected = rows(hudi_rs(path), COLUMNS)
    assert rows(read(spark, path), COLUMNS) == expected == rows(t.to_arrow(), COLUMNS)
    assert len(read(spark, path, **{"hoodie.metadata.enable": "false"})) > len(expected)


def test_pushdown_skips_the_file_slices_column_statistics_rule_out(spark, tmp_path):
    """A copy of a table Apache Hudi wrote with column_stats: a filter on a non-partition column plans only the
    slices its statistics allow (one Spark partition per slice) and gives the rows of the unskipped read."""
    import shutil

    path = str(tmp_path / "t")
    shutil.copytree(REFERENCE_DIR / "cow_v9_timebasedkeygen_epochmillis", path)
    on = {"hoodie.datasource.read.filter.pushdown": "true", "hoodie.datasource.read.split.max.bytes": "1"}

    def load(**extra: str) -> Any:
        return spark.read.format("hudi-py").options(**on, **extra).load(path)

    every = _scan_partitions(load())
    skipped = load().filter("txn_id = 'TXN-003'")
    assert _scan_partitions(skipped) == 1 < every
    plain = load(**{"hoodie.metadata.enable": "false"}).filter("txn_id = 'TXN-003'")
    assert _scan_partitions(plain) == every
    cols = ["txn_id", "account_id", "txn_ts"]
    assert rows(skipped.toArrow(), cols) == rows(plain.toArrow(), cols) != []
