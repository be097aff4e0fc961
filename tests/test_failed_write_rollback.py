"""A write that fails on a store error is rolled back before any later commit completes, even when the store
refuses the rollback too: the writer knows it failed, so its process rolls the instant back before its next write
begins, and the stopped heartbeat lets any other writer do it at once (docs/semantics.md, Atomicity)."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable, StorageError
from hudi_ds.storage.layout import heartbeat_path

COLS = ["id", "ts", "dt", "v"]


def data(ids, ts):
    return pa.table({"id": [f"k{i}" for i in ids], "ts": [ts] * len(ids), "dt": [f"d{i % 5}" for i in ids],
                     "v": [float(i) for i in ids]})


class Outage:
    """The table's store goes down after `after` data files: from then on every request fails with StorageError,
    until `restore()`."""

    METHODS = ("exists", "is_dir", "size", "read_bytes", "open_input", "makedirs", "write_bytes", "put_if_absent",
               "delete", "delete_dir", "list", "walk_files", "lock", "discard_staged")

    def __init__(self, monkeypatch: pytest.MonkeyPatch, table: HudiTable, after: int) -> None:
        self.down = False
        self.left = after
        for name in self.METHODS:
            monkeypatch.setattr(table.storage, name, self._guard(name, getattr(table.storage, name)))

    def _guard(self, name, call):
        def guarded(*args, **kwargs):
            data_file = name in ("write_bytes", "put_if_absent") and not str(args[0]).startswith(".hoodie")
            if data_file and not self.down:
                self.left -= 1
                self.down = self.left < 0
            if self.down:
                raise StorageError(f"{name} {args[0] if args else ''}: the store is unavailable (simulated)")
            return call(*args, **kwargs)

        return guarded

    def restore(self) -> None:
        self.down = False
        self.left = 10**9


def data_files(path: str) -> set[str]:
    return {str(p.relative_to(path)) for p in Path(path).rglob("*")
            if p.is_file() and ".hoodie" not in p.parts and not p.name.startswith(".hoodie_partition")}


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
def test_a_write_that_failed_with_its_rollback_is_rolled_back_before_the_next_commit(tmp_path, monkeypatch,
                                                                                      table_type):
    path = str(tmp_path / "t")
    t = HudiTable.create(path, table_name="f", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, buckets=2)
    t.write(data(range(10), 1))
    files = data_files(path)
    outage = Outage(monkeypatch, t, after=3)
    with pytest.raises(StorageError) as err:
        t.write(data(range(5, 40), 2))  # new partitions' base files, then the store goes down
    assert "rolled back before this process's next write" in "".join(getattr(err.value, "__notes__", []))
    outage.restore()
    [failed] = [i.requested_time for i in t.timeline() if not i.is_completed]
    assert data_files(path) != files  # the partial files are still there, and the heartbeat could not be stopped
    assert (Path(path) / heartbeat_path(failed)).exists()

    HudiTable(path).write(data(range(0, 3), 3))  # the same process, well within the heartbeat timeout
    assert [i for i in t.timeline() if not i.is_completed] == []
    assert not [f for f in data_files(path) if failed in f]
    expected = {f"k{i}": (3 if i < 3 else 1) for i in range(10)}
    assert {r["id"]: r["ts"] for r in t.to_arrow().to_pylist()} == expected
    assert rows(hudi_rs(path), COLS) == rows(t.to_arrow(), COLS)
