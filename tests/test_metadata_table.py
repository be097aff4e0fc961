"""The metadata table's files partition as hudi_ds writes it (hoodie.metadata.enable on version 8/9 tables):
hudi-rs, which takes its file listing from it, reads the same rows as our reader through upserts, deletes,
compaction, clean, archive and rollback; the listing is exactly the committed files; a bootstrap over the
reference tables' data files gives the records Apache Hudi wrote; a write killed between the metadata
deltacommit and its data commit leaves both readers right."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, urlsplit

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import REFERENCE_DIR, hudi_rs, rows

from hudi_ds import HudiTable, faults
from hudi_ds.cli.validate import validate
from hudi_ds.config.properties import loads
from hudi_ds.errors import ConfigError, CorruptTableError, UnsupportedTableError
from hudi_ds.hfile import AvroHFileReader
from hudi_ds.log import read_blocks
from hudi_ds.log.hfile_block import decode_hfile_data_block
from hudi_ds.metadata import bootstrap
from hudi_ds.metadata import records as md
from hudi_ds.metadata.bootstrap import apply_metadata_setting, committed_files
from hudi_ds.metadata.hfiles import encode_base_file, encode_log_block
from hudi_ds.metadata.layout import MetadataTable
from hudi_ds.metadata.listing import (
    compacted_before,
    files_slice,
    is_folded,
    listing_of,
    merged_records,
    read_listing,
)
from hudi_ds.metadata.sync import FileChanges, change_records
from hudi_ds.services import clean as clean_service
from hudi_ds.storage import open_storage

COLS = ["_hoodie_record_key", "_hoodie_partition_path", "fare"]
MDT_OPTIONS = {"hoodie.metadata.enable": "true", "hoodie.metadata.compact.max.delta.commits": "3"}


def trips(ids, ts: int, city: str = "sf") -> pa.Table:
    ids = list(ids)
    return pa.table({"uuid": [f"u{i}" for i in ids], "ts": [ts] * len(ids), "city": [city] * len(ids),
                     "fare": [float(i * ts) for i in ids]})


def make(path: Path, table_type: str, version: int = 9, **options: str) -> HudiTable:
    return HudiTable.create(str(path), table_name="trips", record_key="uuid", ordering_field="ts",
                            partition_by="city", table_type=table_type, buckets=2,
                            options={"hoodie.write.table.version": str(version), **MDT_OPTIONS, **options})


def listing(path: Path) -> dict[str, dict[str, int]]:
    table = HudiTable(str(path))
    return read_listing(MetadataTable.open(table.storage), table.load_timeline())


def non_empty(files: dict[str, dict[str, int]]) -> dict[str, dict[str, int]]:
    """A listing without its empty partitions (a rolled back write leaves its new partition's folder)."""
    return {p: f for p, f in files.items() if f}


def listing_storage(path: Path) -> HudiTable:
    """The table read with hoodie.metadata.enable=false: listing the data partitions instead."""
    return HudiTable(str(path), options={"hoodie.metadata.enable": "false"})


def assert_in_step(path: Path) -> None:
    """hudi-rs and our reader (both listing through the metadata table) and our reader listing the file system
    read the same rows; the metadata table lists exactly the committed files; validate finds nothing."""
    table = HudiTable(str(path))
    expected = rows(listing_storage(path).to_arrow(), COLS)
    assert rows(hudi_rs(str(path)), COLS) == rows(table.to_arrow(), COLS) == expected
    assert non_empty(listing(path)) == non_empty(committed_files(table.storage, table.load_timeline()))
    report = validate(str(path))
    assert report["ok"], report["errors"]


def mdt_files(path: Path) -> list[str]:
    return sorted(os.listdir(path / ".hoodie" / "metadata" / "files"))


# ------------------------------------------------------------------------------------------ end to end


@pytest.mark.parametrize("table_type, version", [("MERGE_ON_READ", 9), ("COPY_ON_WRITE", 9), ("MERGE_ON_READ", 8)])
def test_hudi_rs_reads_our_tables_through_the_metadata_table(tmp_path, table_type, version):
    path = tmp_path / "t"
    t = make(path, table_type, version)
    props = loads((path / ".hoodie" / "hoodie.properties").read_text())
    for n in range(1, 7):
        t.write(trips(range(n, n + 6), n, ["sf", "la"][n % 2]))
        assert_in_step(path)
    assert props["hoodie.table.metadata.partitions"] == "files"  # created with the table
    t.write(trips(range(2, 5), 9, "sf"), operation="delete")
    assert_in_step(path)
    if table_type == "MERGE_ON_READ":
        assert t.compact()
        assert_in_step(path)
    t.write(trips(range(0, 3), 10, "la"))
    assert t.clean(retain_commits=1)
    assert_in_step(path)
    assert t.archive(min_commits=2, max_commits=3)
    assert_in_step(path)
    last = t.write(trips(range(20, 22), 11, "ny"))
    t.rollback(last)
    assert_in_step(path)
    assert "ny" not in listing(path) or not listing(path)["ny"]

    # the metadata table compacted itself into HFile base files and cleaned the older slices
    timeline = sorted(os.listdir(path / ".hoodie" / "metadata" / ".hoodie" / "timeline"))
    assert any(n.endswith(".commit") for n in timeline) and any(n.endswith(".clean") for n in timeline)
    assert any(n.endswith(".rollback") for n in timeline)
    bases = [n for n in mdt_files(path) if n.endswith(".hfile")]
    assert 1 <= len(bases) <= 2
    # and archived the instants of the cleaned slices: its active timeline spans the two kept slices
    assert list((path / ".hoodie" / "metadata" / ".hoodie" / "timeline" / "history").glob("manifest_*"))
    remaining = [n for n in os.listdir(path / ".hoodie" / "metadata" / ".hoodie" / "timeline")
                 if n.endswith(".deltacommit") and "_" in n]
    assert len(remaining) <= 2 * 3 + 2  # two slices of at most 3 delta commits, and the latest ones


def test_rolling_back_a_commit_a_metadata_compaction_folded_in_records_its_deletions(tmp_path, monkeypatch):
    """Once the metadata table compacted a commit's delta commit into its base file, a rollback of that commit
    cannot delete its log file: it writes a delta commit (at the rollback's instant time) deleting the files.
    (A write compacts the metadata table before its own delta commit; here that write then fails, so the
    commit before it is the latest again.)"""
    path = tmp_path / "t"
    t = make(path, "COPY_ON_WRITE", **{"hoodie.metadata.compact.max.delta.commits": "1"})
    for n in range(1, 4):
        t.write(trips(range(4), n))
    last = t.timeline()[-1].requested_time

    def fail_at(name: str) -> None:
        if name == "commit_publishing":
            raise faults.InjectedFault("killed before its commit")

    monkeypatch.setattr(faults, "pause_point", fail_at)
    with pytest.raises(faults.InjectedFault):
        t.write(trips(range(4), 4))
    monkeypatch.undo()
    mdt_timeline = MetadataTable.open(t.storage).timeline()
    assert is_folded(mdt_timeline.get(last), compacted_before(mdt_timeline))
    rollback = t.rollback(last)
    assert f".files-0000-0_{rollback}.log.1_0-0-0" in mdt_files(path)
    assert_in_step(path)
    assert {r["fare"] for r in t.to_arrow().to_pylist()} == {float(i * 2) for i in range(4)}


def test_a_clean_killed_after_its_deletes_is_finished_by_the_next(tmp_path, monkeypatch):
    """Killed between deleting the files and recording them in the metadata table, a clean leaves them listed
    (a warning of validate: readers take only the latest slices, which it kept); the next clean finishes it."""
    path = tmp_path / "t"
    t = make(path, "COPY_ON_WRITE")
    for n in range(1, 5):
        t.write(trips(range(4), n))

    def killed(*args: Any) -> None:
        raise faults.InjectedFault("killed")

    monkeypatch.setattr(clean_service, "sync_instant", killed)
    with pytest.raises(faults.InjectedFault):
        t.clean(retain_commits=1)
    monkeypatch.undo()
    report = validate(str(path))
    assert report["ok"] and any("pending clean" in w for w in report["warnings"])
    assert rows(hudi_rs(str(path)), COLS) == rows(t.to_arrow(), COLS)
    assert t.clean(retain_commits=1)
    assert_in_step(path)
    assert not any("pending clean" in w for w in validate(str(path))["warnings"])


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
def test_a_file_written_into_a_partition_without_a_commit_is_invisible(tmp_path, table_type):
    """A copy of a committed base file under a new file group (an instant the timeline completed): hudi-rs and
    our reader list through the metadata table and do not see it; listing the folder (hoodie.metadata.enable=
    false on the read) sees its rows a second time; validate names the file."""
    path = tmp_path / "t"
    t = make(path, table_type)
    t.write(trips(range(5), 1), operation="insert")
    before = rows(t.to_arrow(), COLS)
    base = next(p for p in (path / "sf").iterdir() if p.suffix == ".parquet")
    file_id, rest = base.name.split("_", 1)
    shutil.copyfile(base, base.with_name(f"{file_id[:-8]}deadbeef-0_{rest}"))
    assert rows(hudi_rs(str(path)), COLS) == rows(HudiTable(str(path)).to_arrow(), COLS) == before
    assert rows(HudiTable(str(path)).to_arrow(filters=[("city", "=", "sf")]), COLS) == before
    assert listing_storage(path).to_arrow().num_rows > len(before)  # the copy's rows a second time
    assert any("the metadata table does not list it" in e for e in validate(str(path))["errors"])


def test_the_metadata_table_on_an_object_store(s3_table):
    """On S3 (the loopback server) with the table services running after each commit: hudi-rs reads through the
    metadata table what our reader reads, and validate finds the listing in step."""
    uri, opts = s3_table
    t = HudiTable.create(uri, table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                         buckets=2, storage_options=opts,
                         options={"hoodie.write.table.version": "9", **MDT_OPTIONS, "compaction.delta_commits": 2,
                                  "clean.retain_commits": 1, "archive.min_commits": 2, "archive.max_commits": 3})
    for n in range(1, 8):
        t.write(trips(range(n, n + 4), n, ["sf", "la"][n % 2]))
    assert rows(hudi_rs(uri, storage_options=opts), COLS) == rows(t.to_arrow(), COLS)
    report = validate(HudiTable(uri, storage_options=opts))
    assert report["ok"], report["errors"]
    mdt_timeline = MetadataTable.open(t.storage).timeline()
    assert {"deltacommit", "commit", "clean"} <= {i.action for i in mdt_timeline.completed()}


@pytest.mark.parametrize("bad", ["../../escape.parquet", "..", "%2e%2e%2fescape.parquet", "a/b.parquet"])
def test_a_listed_file_name_that_leaves_its_partition_is_refused(tmp_path, monkeypatch, bad):
    """The metadata table's file names are the table's own, untrusted: one that would leave its partition folder
    fails the read with CorruptTableError naming it; nothing is read."""
    from hudi_ds.metadata import sync

    path = tmp_path / "t"
    t = make(path, "COPY_ON_WRITE")
    t.write(trips(range(3), 1))
    crafted = sync.change_records

    def with_bad_name(changes):  # noqa: ANN001, ANN202 - the patched function's own signature
        return crafted({**changes, "sf": FileChanges({**changes["sf"].added, bad: 10})})

    monkeypatch.setattr(sync, "change_records", with_bad_name)
    t.write(trips(range(3, 5), 2))
    with pytest.raises(CorruptTableError, match="refusing"):
        HudiTable(str(path)).to_arrow()


def _listed_prefixes(proxy: Any) -> list[str]:
    """Record the prefix of every LIST request the proxy forwards from now on."""
    prefixes: list[str] = []

    def record(method: str, path: str) -> None:
        query = parse_qs(urlsplit(path).query)
        if method == "GET" and "list-type" in query:
            prefixes.append(query.get("prefix", [""])[0])

    proxy.rule = record
    return prefixes


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_snapshot_read_on_an_object_store_lists_no_data_partition(s3, table_type):
    """On S3 (the loopback server, behind a proxy that sees every request) a snapshot read of a table with a
    metadata table lists only under .hoodie/ (the timelines and the metadata table's files partition), and
    reads what hudi-rs and a read listing the partitions (hoodie.metadata.enable=false) read."""
    from s3_proxy import S3Proxy

    proxy = S3Proxy(s3.endpoint).start()
    try:
        uri, opts = f"s3://{s3.new_bucket()}/t", {**s3.options(), "AWS_ENDPOINT_URL": proxy.endpoint}
        t = HudiTable.create(uri, table_name="trips", record_key="uuid", ordering_field="ts", partition_by="city",
                             table_type=table_type, buckets=2, storage_options=opts,
                             options={"hoodie.write.table.version": "9", **MDT_OPTIONS})
        for n, city in enumerate(["sf", "la", "ny", "sf"], start=1):
            t.write(trips(range(n, n + 4), n, city))
        prefixes = _listed_prefixes(proxy)
        got = rows(HudiTable(uri, storage_options=opts).to_arrow(), COLS)
        assert prefixes and all(p.startswith("t/.hoodie/") for p in prefixes), prefixes
        assert rows(HudiTable(uri, storage_options=opts).to_arrow(filters=[("city", "=", "la")]), COLS) == \
            [r for r in got if r[1] == "la"]
        assert all(p.startswith("t/.hoodie/") for p in prefixes), prefixes
        listing = HudiTable(uri, {"hoodie.metadata.enable": "false"}, storage_options=opts).to_arrow()
        assert any(not p.startswith("t/.hoodie/") for p in prefixes)  # listing the data partitions
        proxy.rule = None
        assert rows(listing, COLS) == got == rows(hudi_rs(uri, storage_options=opts), COLS)
    finally:
        proxy.stop()


def test_enabling_on_an_existing_table_bootstraps_and_disabling_drops(tmp_path):
    path = tmp_path / "t"
    t = make(path, "MERGE_ON_READ", **{"hoodie.metadata.enable": "false"})
    t.write(trips(range(4), 1))
    t.write(trips(range(2, 6), 2, "la"))
    assert not (path / ".hoodie" / "metadata").exists()
    on = HudiTable(str(path), options=MDT_OPTIONS)
    on.write(trips(range(3), 3))
    assert mdt_files(path)[-1] == "files-0000-0_0-0-0_00000000000000000.hfile"
    assert_in_step(path)
    HudiTable(str(path)).write(trips(range(1), 4))  # unset: the table keeps its metadata table
    assert_in_step(path)
    reader = HudiTable(str(path))  # its config names the metadata table
    assert reader.snapshot().listed_files is not None
    off = HudiTable(str(path), options={"hoodie.metadata.enable": "false"})
    off.write(trips(range(1), 5))
    assert not (path / ".hoodie" / "metadata").exists()
    assert "hoodie.table.metadata.partitions" not in loads((path / ".hoodie" / "hoodie.properties").read_text())
    assert rows(hudi_rs(str(path)), COLS) == rows(off.to_arrow(), COLS) == rows(reader.to_arrow(), COLS)
    assert reader.snapshot().listed_files is None  # dropped since: it lists the partitions


def test_a_bootstrap_killed_before_its_switch_is_redone(tmp_path, monkeypatch):
    """Killed after writing the metadata table but before listing it in hoodie.properties, a bootstrap leaves a
    table that no reader takes the metadata table of; the next write with the option builds it afresh."""
    path = tmp_path / "t"
    t = make(path, "MERGE_ON_READ", **{"hoodie.metadata.enable": "false"})
    t.write(trips(range(4), 1))

    def killed(*args: Any) -> None:
        raise faults.InjectedFault("killed")

    monkeypatch.setattr(bootstrap, "_write_data_partitions", killed)
    with pytest.raises(faults.InjectedFault):
        HudiTable(str(path), options=MDT_OPTIONS).write(trips(range(2), 2))
    monkeypatch.undo()
    assert (path / ".hoodie" / "metadata" / "files").is_dir()
    assert HudiTable(str(path)).config.metadata_partitions == []
    assert rows(hudi_rs(str(path)), COLS) == rows(t.to_arrow(), COLS) == rows(
        HudiTable(str(path)).to_arrow(), COLS)
    HudiTable(str(path), options=MDT_OPTIONS).write(trips(range(2), 3))
    assert_in_step(path)


def test_a_version_6_table_cannot_have_one(tmp_path):
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="uuid", ordering_field="ts",
                         options={"hoodie.write.table.version": "6"})
    t.write(trips(range(2), 1))
    with pytest.raises(ConfigError, match="version 8 and 9"):
        HudiTable(t.path, options={"hoodie.metadata.enable": "true"}).write(trips(range(2), 2))
    assert not (tmp_path / "t" / ".hoodie" / "metadata").exists()


@pytest.mark.parametrize("reference", ["cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta"])
def test_a_hudi_table_with_indexes_we_do_not_maintain_is_dropped_then_kept_by_us(tmp_path, reference):
    """A table Apache Hudi 1.1 wrote with column statistics, record and secondary indexes, and (as if) bloom
    filters: a write is refused naming them and the drop; a write with hoodie.metadata.enable=false drops the
    metadata table (as Hudi's writers do) and writes; with true we build the files partition and keep it, and hudi-rs reads through it
    what our reader reads."""
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / reference, copy, copy_function=shutil.copyfile)
    props = copy / ".hoodie" / "hoodie.properties"  # as Hudi lists a bloom_filters partition, which we do not keep
    props.write_text(props.read_text("latin-1").replace("hoodie.table.metadata.partitions=",
                                                        "hoodie.table.metadata.partitions=bloom_filters,"), "latin-1")
    table = HudiTable(str(copy))
    row = table.to_arrow().slice(0, 1).drop_columns([c for c in table.to_arrow().column_names
                                                     if c.startswith("_hoodie_")])
    with pytest.raises(UnsupportedTableError, match="partition_stats.*hoodie.metadata.enable=false"):
        table.write(row)
    assert (copy / ".hoodie" / "metadata" / "column_stats").is_dir()
    HudiTable(str(copy), options={"hoodie.metadata.enable": "false"}).write(row)
    assert not (copy / ".hoodie" / "metadata").exists()
    assert HudiTable(str(copy)).config.metadata_partitions == []
    HudiTable(str(copy), options={"hoodie.metadata.enable": "true"}).write(row)
    HudiTable(str(copy)).write(row)
    assert HudiTable(str(copy)).config.metadata_partitions == ["files"]
    ours = HudiTable(str(copy)).to_arrow()
    columns = ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time"]
    assert rows(hudi_rs(str(copy)), columns) == rows(ours, columns)
    assert non_empty(listing(copy)) == non_empty(committed_files(table.storage, HudiTable(str(copy)).load_timeline()))
    report = validate(str(copy))
    assert report["ok"], report["errors"]


# ---------------------------------------------------------------------------------------- Hudi's layout


@pytest.mark.parametrize("reference", ["cow_v9_txns_simple_meta", "mor_avro_v9_txns_simple_meta",
                                       "quickstart_mor_avro_v8_trips_8i3u1d"])
def test_a_bootstrap_gives_the_records_apache_hudi_wrote(tmp_path, reference):
    """Drop a reference table's metadata table and bootstrap ours over the same data files: the files
    partition holds record for record what Hudi's had (the partition list, each partition's files and sizes)."""
    copy = tmp_path / "copy"
    shutil.copytree(REFERENCE_DIR / reference, copy, copy_function=shutil.copyfile)
    storage = open_storage(str(copy))
    config = HudiTable(str(copy)).config
    theirs_mdt = MetadataTable.open(storage)
    theirs = merged_records(theirs_mdt, files_slice(theirs_mdt, theirs_mdt.timeline(),
                                                    config.format.load_timeline(storage)))
    config = apply_metadata_setting(storage, apply_metadata_setting(storage, config, False), True)
    assert config.metadata_partitions == ["files"]
    ours_mdt = MetadataTable.open(storage)
    ours = merged_records(ours_mdt, files_slice(ours_mdt, ours_mdt.timeline(), None))
    assert _without_meta_fields(ours) == _without_meta_fields(theirs)
    props = loads((copy / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").read_text())
    ref_props = loads((REFERENCE_DIR / reference / ".hoodie" / "metadata" / ".hoodie" / "hoodie.properties").read_text())
    assert props == {k: v for k, v in ref_props.items() if k not in ("hoodie.table.metadata.partitions",
                                                                      "hoodie.table.metadata.partitions.inflight")}


@pytest.mark.parametrize("reference", ["cow_v9_timebasedkeygen_epochmillis", "cow_v9_txns_simple_meta",
                                       "mor_avro_v9_txns_simple_meta", "mor_avro_v9_txns_simple_overwrite",
                                       "quickstart_mor_avro_v8_trips_8i3u1d"])
def test_reading_the_tables_hudi_wrote_through_their_metadata_table(reference):
    """The reference tables with a metadata table read through Hudi's own files partition: the rows of a read
    listing the partitions and of hudi-rs."""
    path = str(REFERENCE_DIR / reference)
    table = HudiTable(path)
    listed = table.snapshot().listed_files
    assert listed and all(not e.path.startswith(".hoodie") for e in listed)
    got = rows(table.to_arrow(), ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time"])
    assert got == rows(listing_storage(REFERENCE_DIR / reference).to_arrow(),
                       ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time"])
    assert got == rows(hudi_rs(path), ["_hoodie_record_key", "_hoodie_partition_path", "_hoodie_commit_time"])


def _without_meta_fields(records: dict[str, dict[str, Any]]) -> dict[str, dict[str, Any]]:
    """Records without the `_hoodie_*` fields (Hudi 1.0 filled _hoodie_file_name in some base file records)."""
    return {k: {f: v for f, v in r.items() if not f.startswith("_hoodie_")} for k, r in records.items()}


# ------------------------------------------------------------------------------------------- crashes


def _write_killed_before_its_commit(path: Path, pause_dir: Path, point: str = "commit_publishing") -> None:
    """A writer process SIGKILLed at `point`: by default after the metadata deltacommit, before its data
    instant completes."""
    pause_dir.mkdir()
    env = dict(os.environ, HUDI_DS_TEST_PAUSE_AT=point, HUDI_DS_TEST_PAUSE_DIR=str(pause_dir))
    script = ("import sys, pyarrow as pa; from hudi_ds import HudiTable; "
              "HudiTable(sys.argv[1]).write(pa.table({'uuid': ['u1', 'u9'], 'ts': [50, 50], 'city': ['sf', 'sf'], "
              "'fare': [-1.0, -9.0]}))")
    proc = subprocess.Popen([sys.executable, "-c", script, str(path)], env=env, stdout=subprocess.DEVNULL,
                            stderr=subprocess.PIPE, start_new_session=True)
    deadline = time.monotonic() + 60
    while not (pause_dir / point).exists():
        assert proc.poll() is None, proc.stderr.read().decode() if proc.stderr else proc.returncode
        assert time.monotonic() < deadline
        time.sleep(0.01)
    os.killpg(proc.pid, signal.SIGKILL)
    proc.wait()


def test_a_default_write_killed_in_its_bootstrap_leaves_the_table_as_it_was(tmp_path):
    """A version 9 table without a metadata table: a write (the option unset: Hudi's default, on) SIGKILLed after
    its bootstrap wrote everything but the data table's property leaves a table both readers list as before; the
    next write builds the metadata table afresh, in step."""
    path = tmp_path / "t"
    t = make(path, "MERGE_ON_READ", **{"hoodie.metadata.enable": "false"})
    for n in range(1, 3):
        t.write(trips(range(n, n + 3), n))
    before = rows(t.to_arrow(), COLS)
    _write_killed_before_its_commit(path, tmp_path / "pause", "metadata_bootstrap_written")
    assert (path / ".hoodie" / "metadata" / "files").is_dir()
    assert HudiTable(str(path)).config.metadata_partitions == []
    assert rows(hudi_rs(str(path)), COLS) == before == rows(HudiTable(str(path)).to_arrow(), COLS)
    HudiTable(str(path)).write(trips(range(7, 8), 9))
    assert HudiTable(str(path)).config.metadata_partitions == ["files"]
    assert_in_step(path)


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_write_killed_between_the_two_commits_is_invisible_and_rolled_back(tmp_path, table_type):
    path = tmp_path / "t"
    t = make(path, table_type)
    for n in range(1, 4):
        t.write(trips(range(n, n + 3), n))
    before = rows(t.to_arrow(), COLS)
    _write_killed_before_its_commit(path, tmp_path / "pause")
    mdt_timeline = os.listdir(path / ".hoodie" / "metadata" / ".hoodie" / "timeline")
    pending = [i.requested_time for i in HudiTable(str(path)).load_timeline().pending()]
    assert len(pending) == 1 and any(n.startswith(pending[0] + "_") for n in mdt_timeline)
    assert rows(hudi_rs(str(path)), COLS) == before  # its deltacommit is not taken: the data instant is pending
    ahead = HudiTable(str(path))
    assert rows(ahead.to_arrow(), COLS) == before
    listed = ahead.snapshot().listed_files
    assert listed is not None and not any(pending[0] in e.path for e in listed)  # the killed write's files
    assert any(pending[0] in str(p) for p in path.rglob("*") if ".hoodie" not in p.parts)
    HudiTable(str(path), options={"hoodie.client.heartbeat.timeout.secs": "0"}).write(trips(range(7, 8), 9))
    assert not any(n.startswith(pending[0]) for n in os.listdir(path / ".hoodie" / "metadata" / ".hoodie" / "timeline")
                   if not n.endswith("rollback"))
    assert_in_step(path)


# ---------------------------------------------------------------------------------------- codec property

_NAMES = st.sampled_from([f"f{i}.parquet" for i in range(6)])
_PARTITIONS = st.sampled_from(["", "a", "a/b"])
_OPS = st.lists(st.tuples(_PARTITIONS, st.dictionaries(_NAMES, st.integers(1, 10**12), max_size=3),
                          st.lists(_NAMES, max_size=2), st.booleans()), min_size=1, max_size=12)


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(_OPS)
def test_any_history_of_changes_reads_back_as_applied(ops: list[tuple[str, dict[str, int], list[str], bool]]):
    """Changes encoded as the deltacommits' HFile log blocks, with compactions into base files at any points,
    merge back into the listing a model that applies them in order holds."""
    model: dict[str, dict[str, int]] = {}
    written: set[tuple[str, str]] = set()
    base: dict[str, dict[str, Any]] = {}
    pending: list[bytes] = []
    for n, (partition, added, deleted, compact) in enumerate(ops):
        # a file is written once (a new log file per deltacommit on versions 8/9; names carry the instant): a
        # name is never added again, which Hudi's merge of listings relies on too
        added = {name: size for name, size in added.items() if (partition, name) not in written}
        written.update((partition, name) for name in added)
        deleted = [d for d in deleted if d not in added]
        files = model.setdefault(partition, {}) if added else model.get(partition, {})
        for name in deleted:
            files.pop(name, None)
        files.update(added)
        pending.append(encode_log_block(change_records({partition: FileChanges(added, tuple(deleted))}), 9,
                                        f"2026010100000{n:04d}"))
        if compact:
            base = _merge(base, pending)
            base = dict(AvroHFileReader(encode_base_file(base, 9), "base"))
            pending = []
    merged = _merge(base, pending)
    if not model:  # nothing was ever added: no partition list yet
        assert md.ALL_PARTITIONS_KEY not in merged
    else:
        assert listing_of(merged, "t") == model


def _merge(base: dict[str, dict[str, Any]], blocks: list[bytes]) -> dict[str, dict[str, Any]]:
    updates = [u for raw in blocks for block in read_blocks(raw, "x") for u in decode_hfile_data_block(block, "x")]
    return md.merge(list(base.items()), updates)
