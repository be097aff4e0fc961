"""Tables in S3 (moto's S3 server on 127.0.0.1): the same results as on local disk, in our reader and in
hudi-rs; atomic creates under races; conflicting commits; failed writes rolled back; secrets kept out of
everything a user or another engine can see."""

from __future__ import annotations

import threading

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from model import DictModel
from s3_server import SECRET
from tables import hudi_rs, rows

from hudi_ds import CommitConflictError, ConfigError, CorruptTableError, HudiTable, StorageError
from hudi_ds.cli import main as cli_main
from hudi_ds.index.bucket import bucket_for_hash_values
from hudi_ds.recovery.rollback import rollback_failed_writes
from hudi_ds.storage import open_storage
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.task import TaskWriter

SCHEMA = pa.schema([("id", pa.string()), ("dt", pa.string()), ("ts", pa.int64()), ("v", pa.float64())])
COLS = ["id", "dt", "ts", "v"]


def data(ids, ts: int, dt: str | None = None) -> pa.Table:
    ids = list(ids)
    return pa.Table.from_pylist([{"id": f"k{i}", "dt": dt or f"d{i % 3}", "ts": ts, "v": float(i * ts)} for i in ids],
                                schema=SCHEMA)


def create(uri: str, table_type: str, storage_options: dict[str, str] | None = None, **options) -> HudiTable:
    return HudiTable.create(uri, table_name="trips", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type=table_type, buckets=2, storage_options=storage_options, options=options)


WRITES = [
    ("upsert", lambda: data(range(30), 1)),
    ("upsert", lambda: data(range(20, 45), 2)),
    ("delete", lambda: data(range(0, 10, 2), 3).select(["id", "dt"])),
    ("insert", lambda: data(range(100, 110), 4)),
    ("bulk_insert", lambda: data(range(200, 220), 5)),
    ("insert_overwrite", lambda: data(range(300, 305), 6, dt="d1")),
]


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_change_data_on_s3_reads_like_local_disk(s3_table, tmp_path, table_type):
    """Change data written at commit time (hoodie.table.cdc.enabled) to S3: the same change feed, and a rolled
    back commit's change data gone with it."""
    uri, opts = s3_table
    cdc = {"hoodie.table.cdc.enabled": "true"}
    remote, local = create(uri, table_type, opts, **cdc), create(str(tmp_path / "t"), table_type, **cdc)
    for operation, rows_of in WRITES[:3]:
        remote.write(rows_of(), operation=operation)
        local.write(rows_of(), operation=operation)
    storage = open_storage(uri, opts)
    listed = [e.path for e in storage.walk_files("") if e.path.endswith("-cdc")]
    assert listed, "the upsert and the delete wrote change data"
    feed_cols = ["_change_type", *COLS]
    assert rows(remote.changes("0"), feed_cols) == rows(local.changes("0"), feed_cols)
    remote.rollback(remote.timeline()[-1].requested_time)
    assert len([e for e in storage.walk_files("") if e.path.endswith("-cdc")]) < len(listed)
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(remote.to_arrow(), COLS)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_every_operation_reads_the_same_on_s3_as_on_local_disk(s3_table, tmp_path, table_type):
    uri, opts = s3_table
    remote, local = create(uri, table_type, opts), create(str(tmp_path / "t"), table_type)
    for operation, rows_of in WRITES:
        remote.write(rows_of(), operation=operation)
        local.write(rows_of(), operation=operation)
    expected = rows(local.to_arrow(), COLS)
    assert rows(remote.to_arrow(), COLS) == expected
    assert rows(HudiTable(uri.replace("s3://", "s3a://"), storage_options=opts).to_arrow(), COLS) == expected
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == expected
    first = remote.timeline()[0].requested_time
    assert rows(remote.to_arrow(as_of=first), COLS) == rows(data(range(30), 1), COLS)
    assert rows(remote.incremental(first), COLS) == rows(local.incremental(local.timeline()[0].requested_time), COLS)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_table_services_on_s3(s3_table, table_type):
    uri, opts = s3_table
    t = create(uri, table_type, opts, **{"compaction.delta_commits": 2, "clean.retain_commits": 1,
                                         "archive.min_commits": 2, "archive.max_commits": 3})
    for n in range(8):
        t.write(data(range(n, 20 + n), n + 1))
    actions = {i.action for i in t.timeline()}
    assert "clean" in actions and (table_type == "COPY_ON_WRITE" or "commit" in actions)
    assert t.load_timeline().has_archived_instants()
    expected = rows(data(range(27), 0), ["id"])
    assert rows(t.to_arrow(), ["id"]) == expected
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(t.to_arrow(), COLS)


row = st.fixed_dictionaries({"id": st.sampled_from([f"k{i}" for i in range(8)]), "dt": st.sampled_from(["a", "b"]),
                             "ts": st.integers(0, 4), "v": st.floats(-5, 5, allow_nan=False)})
batch = st.tuples(st.sampled_from(["upsert", "upsert", "delete"]), st.lists(row, min_size=1, max_size=10))


@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.too_slow,
                                                                HealthCheck.function_scoped_fixture])
@given(table_type=st.sampled_from(["MERGE_ON_READ", "COPY_ON_WRITE"]), batches=st.lists(batch, min_size=1, max_size=4))
def test_merge_property_on_s3(s3, table_type, batches):
    uri, opts = f"s3://{s3.new_bucket()}/prop", s3.options()
    t = create(uri, table_type, opts)
    model = DictModel("id", "ts", "dt", merge_on_read=table_type == "MERGE_ON_READ",
                      bucket_of=lambda key: bucket_for_hash_values([key[0]], 2))
    for op, batch_rows in batches:
        t.write(pa.Table.from_pylist(batch_rows, schema=SCHEMA), operation=op)
        if op == "delete":
            model.delete(batch_rows)
        else:
            model.upsert(batch_rows)
    expected = model.sorted_rows(COLS)
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == expected


def test_crashed_write_on_s3_is_invisible_and_rolled_back(s3, s3_table):
    uri, opts = s3_table
    t = create(uri, "MERGE_ON_READ", opts)
    t.write(data(range(20), 1))
    before, keys_before = rows(t.to_arrow(), COLS), set(s3.keys(uri.split("/")[2]))
    plan = Coordinator(t.storage, t.config).begin("upsert", t.to_arrow().select(COLS).schema)
    task = TaskWriter(plan)
    task.write(data(range(10, 40), 2))
    task.finish()  # files written, never committed: the writer "crashed" here
    assert rows(t.to_arrow(), COLS) == before
    assert rollback_failed_writes(t.storage, t.config, timeout_s=0) == [plan.instant]
    leftovers = {k for k in set(s3.keys(uri.split("/")[2])) - keys_before if plan.instant in k}
    assert all("/.hoodie/" in k and k.endswith(".rollback") or ".rollback." in k for k in leftovers), leftovers
    t.write(data(range(0, 5), 3))
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(t.to_arrow(), COLS)


def test_conditional_create_has_exactly_one_winner(s3_table):
    uri, opts = s3_table
    storage = open_storage(uri, opts)
    won: list[int] = []

    def race(i: int) -> None:
        if storage.put_if_absent(".hoodie/race", str(i).encode()):
            won.append(i)

    threads = [threading.Thread(target=race, args=(i,)) for i in range(8)]
    for th in threads:
        th.start()
    for th in threads:
        th.join()
    assert len(won) == 1 and storage.read_bytes(".hoodie/race") == str(won[0]).encode()


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_conflicting_commits_one_wins_and_nothing_of_the_loser_stays(s3_table, tmp_path, where, table_type):
    """Both writers append to the same file groups: neither may overwrite or delete the other's files."""
    uri, opts = s3_table if where == "s3" else (str(tmp_path / "t"), None)
    t = create(uri, table_type, opts)
    t.write(data(range(20), 1))
    coordinator = Coordinator(t.storage, t.config)
    schema = t.to_arrow().select(COLS).schema
    plans = [coordinator.begin("upsert", schema) for _ in range(2)]
    results = []
    for n, plan in enumerate(plans):
        task = TaskWriter(plan)
        task.write(data(range(20), 10 + n))
        results.append(task.finish())
    coordinator.commit(plans[0], [results[0]])
    with pytest.raises(CommitConflictError):
        coordinator.commit(plans[1], [results[1]])
    assert rows(t.to_arrow(), COLS) == rows(data(range(20), 10), COLS)
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(data(range(20), 10), COLS)
    assert not any(plans[1].instant in e.path for e in t.storage.walk_files() if "/.hoodie/" not in "/" + e.path)


def test_secrets_never_reach_the_table_messages_or_reprs(s3, s3_table, capsys):
    uri, opts = s3_table
    t = create(uri, "MERGE_ON_READ", opts)
    t.write(data(range(10), 1))
    t.compact()
    bucket = uri.split("/")[2]
    client = s3.client()
    for key in s3.keys(bucket):
        assert SECRET.encode() not in client.get_object(Bucket=bucket, Key=key)["Body"].read(), key
    assert SECRET not in repr(t) + repr(t.storage) + str(t.to_arrow().schema.metadata)
    wrong = {**opts, "AWS_ENDPOINT_URL": "http://127.0.0.1:9"}  # nothing listens on the discard port
    with pytest.raises(StorageError) as err:
        HudiTable(uri, storage_options=wrong)
    assert "hoodie.properties" in str(err.value) and SECRET not in str(err.value)
    assert SECRET not in capsys.readouterr().out


def test_bad_locations_and_keys_are_config_errors(s3):
    with pytest.raises(ConfigError, match="unsupported table URI scheme 'ftp'"):
        HudiTable("ftp://host/t")
    with pytest.raises(ConfigError, match="unknown storage option 'AWS_SECRET'"):
        HudiTable(f"s3://{s3.new_bucket()}/t", storage_options={"AWS_SECRET": "x"})
    with pytest.raises(ConfigError, match="names no bucket"):
        HudiTable("s3://")


def test_cli_reads_an_s3_table_with_credentials_from_the_environment(s3_table, monkeypatch, capsys):
    uri, opts = s3_table
    t = create(uri, "MERGE_ON_READ", opts)
    t.write(data(range(12), 1))
    for key, value in opts.items():
        monkeypatch.setenv(key, value)
    for command in (["info", uri], ["timeline", uri], ["files", uri], ["show", uri, "--limit", "3"],
                    ["validate", uri]):
        assert cli_main(command) == 0, command
    out = capsys.readouterr().out
    assert "trips" in out and SECRET not in out


def test_tables_in_one_bucket_stay_apart(s3):
    bucket, opts = s3.new_bucket(), s3.options()
    a, b = create(f"s3://{bucket}/a", "MERGE_ON_READ", opts), create(f"s3://{bucket}/ab", "MERGE_ON_READ", opts)
    a.write(data(range(5), 1))
    b.write(data(range(100, 103), 1))
    assert a.to_arrow().num_rows == 5 and b.to_arrow().num_rows == 3
    a.clean(retain_commits=1)
    assert b.to_arrow().num_rows == 3


@pytest.fixture
def proxy(s3):
    from s3_proxy import S3Proxy

    p = S3Proxy(s3.endpoint).start()
    yield p
    p.stop()


def test_store_without_conditional_create_refuses_writes_unless_single_writer(s3, proxy):
    from hudi_ds.storage import object_store

    proxy.strip_conditional = True
    object_store._conditional_create.clear()
    uri, opts = f"s3://{s3.new_bucket()}/t", {**s3.options(), "AWS_ENDPOINT_URL": proxy.endpoint}
    with pytest.raises(ConfigError, match="does not honour conditional creates.*HUDI_SINGLE_WRITER=true"):
        create(uri, "MERGE_ON_READ", opts)
    t = create(uri, "MERGE_ON_READ", {**opts, "HUDI_SINGLE_WRITER": "true"})
    t.write(data(range(10), 1))
    assert HudiTable(uri, storage_options=opts).to_arrow().num_rows == 10  # reads always work
    with pytest.raises(ConfigError, match="conditional creates"):
        HudiTable(uri, storage_options=opts).write(data(range(5), 2))
    object_store._conditional_create.clear()


def test_failed_requests_are_retried_or_fail_cleanly_and_the_next_write_recovers(s3, proxy):
    uri, opts = f"s3://{s3.new_bucket()}/t", {**s3.options(), "AWS_ENDPOINT_URL": proxy.endpoint}
    t = create(uri, "MERGE_ON_READ", opts)
    t.write(data(range(20), 1))
    before = rows(t.to_arrow(), COLS)
    failures = {"left": 2}

    def flaky(method: str, path: str):
        if method == "PUT" and ".log." in path and failures["left"] > 0:
            failures["left"] -= 1
            return ("status", 503)
        return None

    proxy.rule = flaky  # two 503s: the store client retries them and the write succeeds
    t.write(data(range(10, 30), 2))
    assert failures["left"] == 0 and t.to_arrow().num_rows == 30
    resets = {"left": 2}

    def reset_then_slow(method: str, path: str):
        if method == "GET" and path.split("?")[0].endswith(".parquet"):
            if resets["left"] > 0:
                resets["left"] -= 1
                return ("reset", 0)
            return ("delay", 0.3)
        return None

    proxy.rule = reset_then_slow  # reset connections are retried, slow responses waited for
    assert rows(HudiTable(uri, storage_options=opts).to_arrow(), COLS) == rows(t.to_arrow(), COLS)
    assert resets["left"] == 0
    before = rows(t.to_arrow(), COLS)
    proxy.rule = lambda method, path: ("status", 500) if method == "PUT" and ".deltacommit" in path \
        and not path.endswith((".requested", ".inflight")) else None
    with pytest.raises(StorageError, match="deltacommit"):
        t.write(data(range(30, 40), 3))  # the commit itself cannot be published
    proxy.rule = None
    assert rows(t.to_arrow(), COLS) == before
    t2 = HudiTable(uri, storage_options=s3.options())
    t2.write(data(range(40, 45), 4))
    assert t2.to_arrow().num_rows == 35
    assert rows(hudi_rs(uri, storage_options=s3.options()), COLS) == rows(t2.to_arrow(), COLS)


def test_a_marker_naming_a_key_outside_the_table_deletes_nothing(s3):
    """On object stores the same rule holds for keys: another table's object survives a crafted marker."""
    bucket, opts = s3.new_bucket(), s3.options()
    t = create(f"s3://{bucket}/lake/t", "MERGE_ON_READ", opts)
    t.write(data(range(4), 1))
    s3.client().put_object(Bucket=bucket, Key="lake/victim.txt", Body=b"precious")
    storage = t.storage
    storage.write_bytes(".hoodie/20300101000000000.deltacommit.requested", b"")
    storage.write_bytes(".hoodie/20300101000000000.deltacommit.inflight", b"{}")
    storage.write_bytes(".hoodie/.temp/20300101000000000/MARKERS0", b"../victim.txt.marker.CREATE\n")
    with pytest.raises(CorruptTableError, match="MARKERS0"):
        t.write(data(range(2), 2))
    assert s3.client().get_object(Bucket=bucket, Key="lake/victim.txt")["Body"].read() == b"precious"


@pytest.mark.parametrize("where", ["local", "s3"])
@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_two_writer_processes_on_the_same_keys_lose_nothing(s3, tmp_path, where, table_type):
    """Two processes upsert the same keys 12 times each: every write that returned is committed and durable, the
    others got CommitConflictError and left nothing; the table holds the committed rows with the greatest ordering
    value (the merge rule), never a duplicate key."""
    import os
    import subprocess
    import sys
    from pathlib import Path

    from hudi_ds.cli.validate import validate

    uri = f"s3://{s3.new_bucket()}/race" if where == "s3" else str(tmp_path / "race")
    env = {**os.environ, **(s3.options() if where == "s3" else {})}
    opts = s3.options() if where == "s3" else None
    create(uri, table_type, opts)
    start = tmp_path / "go"
    script = Path(__file__).parent / "race_writer.py"
    procs = [subprocess.Popen([sys.executable, str(script), uri, str(w), "12", str(start)], env=env,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True) for w in (1, 2)]
    start.touch()
    outcomes = []
    for p in procs:
        out, err = p.communicate(timeout=300)
        assert p.returncode == 0, err[-3000:]
        outcomes += [line.split() for line in out.splitlines()]
    committed = {o[1]: int(o[2]) for o in outcomes if o[0] == "ok"}
    assert len(outcomes) == 24 and committed
    t = HudiTable(uri, storage_options=opts)
    completed = {i.requested_time for i in t.timeline() if i.is_completed}
    assert set(committed) <= completed, "a write returned but its commit is not on the timeline"
    got = t.to_arrow()
    assert got.num_rows == 20 and set(got["ts"].to_pylist()) == {max(committed.values())}
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(got, COLS)
    report = validate(t)
    assert report["ok"], report["errors"]


def test_the_commit_lock_of_a_crashed_holder_is_taken_over_once_it_expired(s3_table):
    """A writer killed while it held the commit lock leaves its lease behind: the next writer waits for it
    while it is live and takes it over (conditional update on the lease's ETag) once it expired."""
    import json
    import time

    from hudi_ds.storage.layout import COMMIT_LOCK_PATH

    uri, opts = s3_table
    table = create(uri, "MERGE_ON_READ", opts)
    live = json.dumps({"owner": "crashed", "expires": time.time() + 600}).encode()
    table.storage.write_bytes(COMMIT_LOCK_PATH, live)
    with pytest.raises(StorageError, match="stayed held"), table.storage.lock(COMMIT_LOCK_PATH, 0.2):
        pass
    table.storage.write_bytes(COMMIT_LOCK_PATH, json.dumps({"owner": "crashed", "expires": time.time() - 1}).encode())
    table.write(data(range(5), 1))
    assert rows(table.to_arrow(), COLS) == rows(data(range(5), 1), COLS)
    assert not table.storage.exists(COMMIT_LOCK_PATH)  # released by its new holder


def test_a_holder_longer_than_the_lease_keeps_the_commit_lock(s3_table, monkeypatch):
    """A clean or upgrade of a large table holds the commit lock longer than the lease lasts: the holder
    renews it, so no other writer takes it over meanwhile; it is released at the end."""
    import time

    from hudi_ds.storage import object_store
    from hudi_ds.storage.layout import COMMIT_LOCK_PATH

    monkeypatch.setattr(object_store, "LEASE_S", 0.6)
    uri, opts = s3_table
    table = create(uri, "MERGE_ON_READ", opts)
    other = HudiTable(uri, storage_options=opts).storage
    outcome: list[str] = []

    def contend() -> None:
        try:
            with other.lock(COMMIT_LOCK_PATH, 1.5):
                outcome.append("taken")
        except StorageError:
            outcome.append("refused")

    with table.storage.lock(COMMIT_LOCK_PATH, 1.0):
        contender = threading.Thread(target=contend)
        contender.start()
        time.sleep(2.0)  # more than three leases
        contender.join()
    assert outcome == ["refused"]
    assert not table.storage.exists(COMMIT_LOCK_PATH)
    with other.lock(COMMIT_LOCK_PATH, 1.0):  # free again
        pass


# ---- partition-stats branch: column and partition statistics on S3 ----------------------------------------------

def test_column_and_partition_stats_on_s3_skip_like_local_disk(s3_table):
    """A MOR table on S3 with column_stats and partition_stats: every write keeps both in step (base and log
    files), filtered reads give the unskipped rows, validate finds the statistics matching the files."""
    uri, opts = s3_table
    t = create(uri, "MERGE_ON_READ", opts, **{"hoodie.write.table.version": "9", "hoodie.metadata.enable": "true",
                                              "hoodie.metadata.index.column.stats.enable": "true",
                                              "hoodie.metadata.index.partition.stats.enable": "true"})
    for op, make in WRITES[:4]:
        t.write(make(), operation=op)
    stats = t._read(lambda snap: snap.index_stats("partition_stats", ["ts"]))
    assert stats is not None and set(stats) == {"d0", "d1", "d2"}
    plain = HudiTable(uri, storage_options=opts, options={"hoodie.metadata.enable": "false"})
    for f in [("ts", "=", 4), ("id", "=", "k21"), ("v", ">", 50.0)]:
        assert rows(t.to_arrow(filters=[f]), COLS) == rows(plain.to_arrow(filters=[f]), COLS), f
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(t.to_arrow(), COLS)
    from hudi_ds.cli.validate import validate

    check = next(c for c in validate(HudiTable(uri, storage_options=opts))["checks"]
                 if c["name"].startswith("column and partition"))
    assert check["status"] == "ok", check


def test_record_index_and_index_definitions_on_s3(s3, s3_table):
    """A RECORD_INDEX table on S3 with a column-stats column list: every write (a partition move, a delete, enough
    commits for the metadata table to compact) tags through the record index read from the bucket, Hudi's index
    definitions file is written there, and our reader, hudi-rs and validate agree with a model."""
    from hudi_ds.cli.validate import validate

    uri, opts = s3_table
    t = HudiTable.create(uri, table_name="trips", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type="MERGE_ON_READ", storage_options=opts, options={
        "hoodie.write.table.version": "9", "hoodie.metadata.enable": "true", "hoodie.index.type": "RECORD_INDEX",
        "hoodie.metadata.record.index.enable": "true", "hoodie.metadata.record.index.min.filegroup.count": "2",
        "hoodie.metadata.compact.max.delta.commits": "3", "hoodie.record.index.update.partition.path": "true",
        "hoodie.metadata.index.column.stats.enable": "true",
        "hoodie.metadata.index.column.stats.column.list": "ts,v"})
    model = DictModel("id", "ts", merge_on_read=True)  # a global index: one version of a key in the table
    for op, table in [("upsert", data(range(30), 1)), ("upsert", data(range(20, 40), 2, dt="d9")),
                      ("delete", data(range(0, 10, 3), 3)), ("upsert", data(range(5, 25), 4))]:
        t.write(table.select(["id", "dt"]) if op == "delete" else table, operation=op)
        if op == "delete":
            model.delete(table.to_pylist())
        else:
            model.upsert(table.to_pylist())
    groups = {r["id"]: r["_hoodie_file_name"].split("_")[0] for r in t.to_arrow().to_pylist()}
    updates = data(range(25, 40, 3), 5, dt="d9")  # keys the second write moved to d9 and the fourth left there
    t.write(updates, operation="upsert")  # updates: each stays in the file group that holds it
    model.upsert(updates.to_pylist())
    after = {r["id"]: r["_hoodie_file_name"].split("_")[0] for r in t.to_arrow().to_pylist()}
    assert updates.num_rows > 0 and all(after[k] == groups[k] for k in updates["id"].to_pylist())
    expected = model.sorted_rows(COLS)
    assert rows(t.to_arrow(), COLS) == expected
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == expected
    bucket = uri.removeprefix("s3://").split("/")[0]
    keys = s3.keys(bucket)
    assert any(k.endswith(".hoodie/.index_defs/index.json") for k in keys)
    assert any("/.hoodie/metadata/record_index/" in k for k in keys)
    report = validate(HudiTable(uri, storage_options=opts))
    assert report["ok"], report["errors"]
    checks = {c["name"]: c["status"] for c in report["checks"]}
    assert checks["record index maps every key to its file group"] == "ok"
