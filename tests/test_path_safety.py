"""No path out of the table: markers, commit metadata, clean and compaction plans and symlinked folders that
point outside the table folder are refused with a CorruptTableError naming the file that holds them, before
anything is deleted. A victim file beside the table must survive every attack, byte for byte."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ds import CorruptTableError, HudiTable
from hudi_ds.cli import main as cli_main
from hudi_ds.storage import require_inside
from hudi_ds.timeline.avro_models import (
    clean_plan,
    compaction_operation,
    compaction_plan,
    encode_avro_instant,
)
from hudi_ds.timeline.avro_schemas import CLEANER_PLAN, COMPACTION_PLAN

PENDING = "20300101000000000"  # a failed write from the future: no heartbeat, rolled back by the next write
VICTIM_BYTES = b"precious, and not the table's"


def rows(ids, ts: int) -> pa.Table:
    return pa.table({"id": [f"k{i}" for i in ids], "dt": ["a" if i % 2 else "b" for i in ids], "ts": [ts] * len(ids)})


@pytest.fixture
def setup(tmp_path):
    """A MOR table with two commits in tmp/table and a victim file at tmp/victim.txt."""
    t = HudiTable.create(str(tmp_path / "table"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=1, options={"compaction.schedule.enabled": "false",
                                                                "hoodie.clean.automatic": "false"})
    t.write(rows(range(6), 1))
    t.write(rows(range(3), 2))
    victim = tmp_path / "victim.txt"
    victim.write_bytes(VICTIM_BYTES)
    return t, Path(t.path), victim


def files_of(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()
            and ".hoodie" not in p.parts}


def pending_write(table: Path, markers: str) -> None:
    hoodie = table / ".hoodie"
    (hoodie / f"{PENDING}.deltacommit.requested").write_bytes(b"")
    (hoodie / f"{PENDING}.deltacommit.inflight").write_bytes(b"{}")
    temp = hoodie / ".temp" / PENDING
    temp.mkdir(parents=True)
    (temp / "MARKERS0").write_text(markers)


@pytest.mark.parametrize("entry", [
    "../victim.txt",
    "a/../../victim.txt",
    "%2e%2e/victim.txt",
    "a%2F..%2F..%2Fvictim.txt",
    "..\\victim.txt",
    "a/b\x00/../../victim.txt",
    "ABSOLUTE",
])
def test_marker_list_naming_an_outside_file(setup, entry):
    t, table, victim = setup
    entry = str(victim) if entry == "ABSOLUTE" else entry
    pending_write(table, f"{entry}.marker.CREATE\n")
    before = files_of(table)
    with pytest.raises(CorruptTableError, match="MARKERS0") as err:
        t.write(rows(range(2), 3))
    assert "leave the table folder" in str(err.value) and "nothing was" in str(err.value)
    assert victim.read_bytes() == VICTIM_BYTES
    assert files_of(table) == before


def test_per_file_marker_with_an_encoded_traversal(setup):
    t, table, victim = setup
    pending_write(table, "")
    (table / ".hoodie" / ".temp" / PENDING / "%2e%2e%2fvictim.txt.marker.CREATE").write_bytes(b"")
    with pytest.raises(CorruptTableError, match="marker.CREATE"):
        t.write(rows(range(2), 3))
    assert victim.read_bytes() == VICTIM_BYTES


def test_symlinked_partition_folder_pointing_outside(setup, tmp_path):
    t, table, victim = setup
    (table / "evil").symlink_to(tmp_path)
    pending_write(table, "evil/victim.txt.marker.CREATE\n")
    with pytest.raises(CorruptTableError, match="outside the table folder"):
        t.write(rows(range(2), 3))
    assert victim.read_bytes() == VICTIM_BYTES


def edit_latest_stat(t, table, **fields) -> str:
    """Set `fields` in the first write stat of the latest commit's metadata; the commit's instant time."""
    latest = t.timeline()[-1]
    commit = table / ".hoodie" / f"{latest.requested_time}.deltacommit"
    doc = json.loads(commit.read_bytes())
    next(iter(doc["partitionToWriteStats"].values()))[0].update(fields)
    commit.write_text(json.dumps(doc))
    return latest.requested_time


def test_commit_metadata_listing_an_outside_file(setup):
    t, table, victim = setup
    latest = edit_latest_stat(t, table, path="../victim.txt")
    before = files_of(table)
    with pytest.raises(CorruptTableError, match=f"{latest}.deltacommit"):
        HudiTable(str(table)).rollback(latest)
    with pytest.raises(CorruptTableError, match="leave the table folder"):
        HudiTable(str(table)).to_arrow()
    assert victim.read_bytes() == VICTIM_BYTES and files_of(table) == before
    assert cli_main(["validate", str(table)]) == 1


def test_change_data_listing_an_outside_file(setup):
    """cdcStats names files the change feed reads and a rollback deletes: one outside the table is refused."""
    t, table, victim = setup
    latest = edit_latest_stat(t, table, cdcStats={"../victim.txt": len(VICTIM_BYTES)})
    before = files_of(table)
    with pytest.raises(CorruptTableError, match=f"{latest}.deltacommit"):
        HudiTable(str(table)).rollback(latest)
    with pytest.raises(CorruptTableError, match="leave the table folder"):
        HudiTable(str(table)).changes("0")
    assert victim.read_bytes() == VICTIM_BYTES and files_of(table) == before


def test_clean_plan_naming_an_outside_file(setup):
    t, table, victim = setup
    plan = clean_plan("KEEP_LATEST_COMMITS", {"a": [str(victim)], "b": [str(table / "b" / "..." / ".." / ".." /
                                                                          "victim.txt")]},
                      (t.timeline()[0].requested_time, "deltacommit", "COMPLETED"))
    (table / ".hoodie" / f"{PENDING}.clean.requested").write_bytes(encode_avro_instant(plan, CLEANER_PLAN))
    before = files_of(table)
    with pytest.raises(CorruptTableError, match="clean plan"):
        t.clean(retain_commits=1)
    assert victim.read_bytes() == VICTIM_BYTES and files_of(table) == before


def test_compaction_plan_naming_an_outside_file(setup):
    t, table, victim = setup
    op = compaction_operation(t.timeline()[0].requested_time, "00000000-0000-0000-0000-000000000000-0", "..",
                              "victim.txt", [])
    (table / ".hoodie" / f"{PENDING}.compaction.requested").write_bytes(
        encode_avro_instant(compaction_plan([op]), COMPACTION_PLAN))
    with pytest.raises(CorruptTableError, match="compaction.requested"):
        t.run_compaction()
    assert victim.read_bytes() == VICTIM_BYTES


@pytest.mark.parametrize("legit", ["", "dt=2024-01-01", "americas/brazil/sao_paulo", "a%2Fb", "caf%C3%A9",
                                   ".hoodie/.temp/x", "p/.00000000-0_2024.log.1_0-0-0", "a..b/c.."])
def test_legitimate_paths_pass(legit):
    assert require_inside(legit) == legit


def test_reference_tables_still_read(reference_dir):
    for name in sorted(os.listdir(reference_dir)):
        if (reference_dir / name / ".hoodie").is_dir():
            HudiTable(str(reference_dir / name)).to_arrow()
