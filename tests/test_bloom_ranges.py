"""BLOOM-index tagging of time-ordered keys, the workload Apache Hudi's bloom index is meant for, through HudiTable:
key ranges prune files before their filters are parsed, with hoodie.bloom.index.use.metadata before their footers
are opened (the ranges from the metadata table's column_stats), and random time-ordered histories equal a dict
model and hudi-rs."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.index import bloom_lookup

KEY, FILE, PART = "_hoodie_record_key", "_hoodie_file_name", "_hoodie_partition_path"
# every write makes file groups of its own (files of time-ordered keys cover narrow ranges); filters consulted
# however few rows the files have
NEW_GROUPS = {"hoodie.parquet.small.file.limit": "0", "compaction.schedule.enabled": "false"}
USE_METADATA = {"hoodie.metadata.index.column.stats.enable": "true", "hoodie.bloom.index.use.metadata": "true"}


def create(path: Path, table_type: str, version: int, **options: Any) -> HudiTable:
    return HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                            table_type=table_type, options={"hoodie.index.type": "BLOOM",
                                                            "hoodie.write.table.version": version,
                                                            **NEW_GROUPS, **options})


def batch(ids: list[str], ts: int) -> pa.Table:
    return pa.table({"id": ids, "ts": [ts] * len(ids), "dt": ["d1"] * len(ids), "v": [f"{i}@{ts}" for i in ids]})


def key_of(i: int) -> str:
    return f"k{i:04d}"  # one width: the keys order as their numbers do


def file_ids(t: HudiTable) -> dict[str, str]:
    """key -> the file group holding it."""
    return {r[KEY]: r[FILE].split("_")[0] for r in t.to_arrow(columns=[KEY, FILE]).to_pylist()}


class Reads:
    """What tagging opens: base file footers and bloom filters parsed, by file group, and slices whose keys are
    read."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch) -> None:
        self.footers: list[str] = []
        self.filters: list[str] = []
        monkeypatch.setattr(bloom_lookup, "TESTED_KEY_COST", 0)
        footer, read_filter = bloom_lookup.footer, bloom_lookup.FilterBits.read

        def counted_footer(storage: Any, rel: str) -> Any:
            self.footers.append(Path(rel).name.split("_")[0])
            return footer(storage, rel)

        def counted_filter(text: bytes, what: str) -> Any:
            if what.endswith(".parquet"):  # tagging names the file (a rewrite growing its filter does not)
                self.filters.append(Path(what).name.split("_")[0])
            return read_filter(text, what)

        monkeypatch.setattr(bloom_lookup, "footer", counted_footer)
        monkeypatch.setattr(bloom_lookup.FilterBits, "read", staticmethod(counted_filter))

    def clear(self) -> None:
        self.footers.clear()
        self.filters.clear()


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize(("version", "options"), [(6, {}), (9, {}), (9, USE_METADATA)])
def test_tagging_parses_the_filters_only_of_files_whose_key_range_holds_a_key(tmp_path, monkeypatch, table_type,
                                                                              version, options):
    t = create(tmp_path / "t", table_type, version, **options)
    for start in range(0, 400, 50):  # 8 loads of increasing keys: 8 file groups of narrow key ranges
        t.write(batch([key_of(i) for i in range(start, start + 50)], 1))
    before = file_ids(t)
    newest, older = before[key_of(399)], before[key_of(349)]
    reads = Reads(monkeypatch)
    t.write(batch([key_of(360), key_of(399), key_of(310)] + [key_of(i) for i in range(400, 420)], 2))
    # recent updates, new keys above every range: the newest files alone hold a key in their range
    assert sorted(reads.filters) == sorted([newest, older])
    # footers: each at most once; with the metadata table's key ranges, only those of the range candidates
    assert len(reads.footers) == len(set(reads.footers))
    assert set(reads.footers) == ({newest, older} if options else set(before.values()))
    reads.clear()
    t.write(batch([key_of(5), key_of(410), key_of(420)], 3))  # the oldest file and the file group of new keys
    assert sorted(reads.filters) == sorted([before[key_of(5)], file_ids(t)[key_of(410)]])
    after = file_ids(t)
    assert all(after[k] == g for k, g in before.items()) and len(after) == 421
    updated = {360: 2, 399: 2, 310: 2, 5: 3, 410: 3, 420: 3}
    expected = sorted(((key_of(i), updated.get(i, 2 if i >= 400 else 1)) for i in range(421)), key=repr)
    assert rows(t.to_arrow(), ["id", "ts"]) == expected
    assert rows(hudi_rs(str(tmp_path / "t")), ["id", "ts"]) == expected


# a time-ordered history: each step brings keys above all before it, updates recent keys and deletes some
STEP = st.tuples(st.integers(1, 6), st.lists(st.integers(0, 15), max_size=5), st.lists(st.integers(0, 15),
                                                                                        max_size=3))


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize(("version", "options"), [(6, {}), (9, USE_METADATA)])
@settings(max_examples=6, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=st.lists(STEP, min_size=1, max_size=5))
def test_time_ordered_histories_read_back_as_the_model_and_in_hudi_rs(tmp_path_factory, table_type, version,
                                                                      options, history):
    path = tmp_path_factory.mktemp("t")
    t = create(path, table_type, version, **options)
    model: dict[str, int] = {}
    top = 0
    for ts, (new, recent, gone) in enumerate(history, start=1):
        held = sorted(model)
        updates = sorted({held[-1 - r] for r in recent if r < len(held)})  # r-th newest key
        deletes = sorted({held[-1 - r] for r in gone if r < len(held)} - set(updates))
        fresh = [key_of(i) for i in range(top, top + new)]
        top += new
        t.write(batch(updates + fresh, ts))
        model.update(dict.fromkeys(updates + fresh, ts))
        if deletes:
            t.write(batch(deletes, ts), operation="delete")
            for k in deletes:
                del model[k]
    expected = sorted(model.items(), key=repr)
    assert rows(t.to_arrow(), ["id", "ts"]) == expected
    if expected:
        assert rows(hudi_rs(str(path)), ["id", "ts"]) == expected
