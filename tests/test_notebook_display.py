"""What notebooks and terminals show: HudiTable's HTML view and history() table, and the `hudi-py` progress bar
(on a terminal only: never with --json, never when piped)."""

from __future__ import annotations

import io
import json
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pyarrow as pa
import pytest

from hudi_ds import HudiTable
from hudi_ds.cli import main


@pytest.fixture
def trips(tmp_path: Path) -> HudiTable:
    """Three partitions; inserts, an upsert and a delete; then a compaction and a clean."""
    t = HudiTable.create(str(tmp_path / "a<b" / "trips"), table_name="trips", record_key="uuid", ordering_field="ts",
                         partition_by="city", buckets=2, options={"compaction.schedule.enabled": "false",
                                                                  "hoodie.clean.automatic": "false"})
    t.write(pa.table({"uuid": ["a", "b", "c", "d"], "ts": [1] * 4, "city": ["sf", "nyc", "sf", "la"],
                      "fare": [10.0, 20.0, 5.0, 7.0]}))
    t.write(pa.table({"uuid": ["a"], "ts": [2], "city": ["sf"], "fare": [12.5]}))
    t.write(pa.table({"uuid": ["b"], "city": ["nyc"]}), operation="delete")
    return t


def test_a_table_shows_its_type_version_partitions_schema_and_last_commits(trips):
    page = trips._repr_html_()
    for text in ("MERGE_ON_READ", "table version", "3: la, nyc, sf", "uuid", "fare", "double", "UPSERT",
                 "DELETE", "a&lt;b"):
        assert text in page
    commits = [i.requested_time for i in trips.timeline()]
    assert all(c in page for c in commits)
    assert page.index(commits[-1]) < page.index(commits[0])  # newest first
    assert "a<b" not in page  # text is escaped


def compacted_then_written(t: HudiTable) -> None:
    """A compaction, then a write: the slices the compaction replaced can be cleaned."""
    t.compact()
    t.write(pa.table({"uuid": ["a"], "ts": [3], "city": ["sf"], "fare": [13.5]}))


def test_history_is_a_table_of_the_timeline(trips):
    compacted_then_written(trips)
    trips.clean(retain_commits=1)
    history = trips.history()
    assert isinstance(history, pl.DataFrame) and "<table" in history._repr_html_()
    assert history["action"].to_list() == ["deltacommit", "deltacommit", "deltacommit", "commit", "deltacommit"]
    assert history["rows_written"].to_list()[:3] == [4, 1, 0]  # a delete writes no row
    assert history["rows_deleted"].to_list()[2] == 1
    assert history["operation"].to_list() == ["UPSERT", "UPSERT", "DELETE", "COMPACT", "UPSERT"]
    everything = trips.history(include_all=True)
    assert "clean" in everything["action"].to_list()
    assert everything.filter(pl.col("action") == "clean")["files_deleted"].to_list()[0] > 0


# ---- the progress bar -------------------------------------------------------------------------------------------

class Terminal(io.StringIO):
    def isatty(self) -> bool:
        return True


def run(monkeypatch: pytest.MonkeyPatch, *args: Any, terminal: bool = True) -> tuple[int, str, str]:
    """The command with stderr (and stdout) on a terminal, or piped."""
    for name in ("FORCE_COLOR", "TTY_COMPATIBLE", "NO_COLOR", "TTY_INTERACTIVE"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("TERM", "xterm-256color")
    monkeypatch.setenv("COLUMNS", "160")
    out, err = (Terminal(), Terminal()) if terminal else (io.StringIO(), io.StringIO())
    monkeypatch.setattr(sys, "stdout", out)
    monkeypatch.setattr(sys, "stderr", err)
    rc = main([str(a) for a in args])
    return rc, out.getvalue(), err.getvalue()


def test_compaction_shows_a_bar_of_its_file_groups_on_a_terminal(trips, monkeypatch):
    rc, out, err = run(monkeypatch, "compact", trips.path)
    assert rc == 0 and "compact: done" in out
    assert "compacting" in err and "2/2" in err  # the two file groups with log files: sf and nyc
    assert "written" in err


def test_no_bar_with_json_or_when_piped(trips, monkeypatch):
    rc, out, err = run(monkeypatch, "compact", trips.path, "--json")
    assert rc == 0 and json.loads(out)["command"] == "compact" and err == ""
    rc, out, err = run(monkeypatch, "validate", trips.path, terminal=False)
    assert rc == 0 and "table is valid" in out and err == ""


def test_validate_clean_and_show_count_their_files(trips, monkeypatch):
    from hudi_ds.cli.validate import validate

    rc, _, err = run(monkeypatch, "validate", trips.path)
    assert rc == 0 and f"/{len(validate(trips.path)['checks'])}" in err and "read" in err  # the bar counts checks
    compacted_then_written(trips)
    rc, out, err = run(monkeypatch, "clean", trips.path, "--retain-commits", "1")
    assert rc == 0 and "clean: done" in out and "cleaning" in err and "deleted" in err
    rc, out, err = run(monkeypatch, "show", trips.path, "--where", "city = sf")
    assert rc == 0 and "13.5" in out and "reading" in err and " read" in err
