"""The split of a load into file groups (hudi_ds.write.task, routing): input in several chunks, few-valued string
columns dictionary-encoded before the split, record keys built per group. The table reads back as written, in
hudi-py and hudi-rs, and each base file stores its partition column as one dictionary value, as Hudi's do."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable
from hudi_ds.write import task
from hudi_ds.write.commit import Coordinator
from hudi_ds.write.input import evolve
from hudi_ds.write.task import TaskWriter

pytestmark = pytest.mark.interop

COLS = ["id", "name", "dt", "kind", "ts"]


def load_rows(first: int, n: int) -> pa.Table:
    ids = np.arange(first, first + n, dtype=np.int64)
    return pa.table({
        "id": ids,
        "name": pa.array([f"name-{i}" for i in ids]),
        "dt": pa.array([f"2024-01-0{i % 5 + 1}" for i in ids]),
        "kind": pa.array([("a", "b", None)[i % 3] for i in ids]),
        "ts": np.full(n, 1, dtype=np.int64),
    })


@pytest.mark.parametrize("table_type,options", [
    ("MERGE_ON_READ", {}),
    ("COPY_ON_WRITE", {"hoodie.populate.meta.fields": "false"}),
])
@pytest.mark.parametrize("pieces", ["one chunked table", "two tables"])
def test_chunked_load_reads_back_with_one_valued_partition_columns(tmp_path: Path, table_type: str,
                                                                  options: dict[str, str], pieces: str,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    """The input as one table whose columns come in chunks of different sizes, or as two tables (each routed and
    encoded on its own, as the first was judged: a file group gets rows of both)."""
    monkeypatch.setattr(task, "_PARALLEL_ROUTE_ROWS", 1000)  # routed in parts on the writer threads
    parts = [load_rows(0, 1000), load_rows(1000, 2000)]  # `kind`: few values in the first, all distinct after
    parts[1] = parts[1].set_column(3, "kind", pa.array([f"kind-{i}" for i in range(2000)]))
    data = pa.concat_tables(parts)
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=3, table_type=table_type, options=options)
    t.write(data if pieces == "one chunked table" else parts, operation="bulk_insert")
    expected = rows(data, COLS)
    assert rows(t.to_arrow(), COLS) == expected == rows(hudi_rs(t.path), COLS)
    if options:
        return
    keys = t.to_arrow(columns=["id", "_hoodie_record_key"])
    assert keys["_hoodie_record_key"].to_pylist() == [str(i) for i in keys["id"].to_pylist()]
    files = sorted((tmp_path / "t").glob("2024-*/*.parquet"))
    assert len(files) == 15
    for path in files:
        meta = pq.read_metadata(path)
        names = [meta.schema.column(i).path for i in range(len(meta.schema))]
        dt = meta.row_group(0).column(names.index("dt"))
        assert dt.has_dictionary_page and dt.statistics.min == dt.statistics.max == path.parent.name
        stored = pq.read_table(path, columns=["dt"], read_dictionary=["dt"])["dt"]  # the dictionary page's values
        assert [c.dictionary.to_pylist() for c in stored.chunks] == [[path.parent.name]]


def test_bucket_another_task_claimed_gets_plain_strings_in_its_log(tmp_path: Path) -> None:
    """Two tasks of one write bring rows of the same new buckets of a merge-on-read table: the first claims each
    bucket and writes its base file, the other writes its rows as logs there (plain strings, not the dictionary
    columns the split made)."""
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=2)
    parts = [load_rows(0, 300), load_rows(300, 300)]
    coordinator = Coordinator(t.storage, t.config)
    plan = coordinator.begin("bulk_insert", evolve(None, parts[0].schema))
    results = []
    for task_id, part in enumerate(parts):
        writer = TaskWriter(plan, task_id=task_id)
        writer.write(part)
        results.append(writer.finish())
    assert results[1].files and all(f.is_log for f in results[1].files)
    coordinator.commit(plan, results)
    expected = rows(pa.concat_tables(parts), COLS)
    assert rows(t.to_arrow(), COLS) == expected == rows(hudi_rs(t.path), COLS)


@pytest.mark.parametrize("ordering", ["ts", "tag"])
def test_a_load_of_few_valued_string_keys_keeps_each_keys_latest_version(tmp_path: Path, ordering: str) -> None:
    """Key and ordering columns with few distinct strings stay plain strings through the split: a load's versions
    of a key are ranked by them (a dictionary-encoded key could not be counted nor ranked)."""
    n = 3000
    keys = [("k1", "k2", "k3")[i % 3] for i in range(n)]
    load = pa.table({"id": keys, "ts": np.arange(n, dtype=np.int64), "tag": [f"t{i % 7}" for i in range(n)],
                     "dt": ["2024-01-01"] * n})
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field=ordering,
                         partition_by="dt", buckets=2)
    t.write(load, operation="bulk_insert")
    latest: dict[str, tuple] = {}
    for r in load.to_pylist():
        held = latest.get(r["id"])
        if held is None or r[ordering] >= held[1 if ordering == "ts" else 2]:
            latest[r["id"]] = (r["id"], r["ts"], r["tag"])
    expected = sorted(latest.values())
    assert rows(t.to_arrow(), ["id", "ts", "tag"]) == expected
    assert rows(hudi_rs(str(tmp_path / "t")), ["id", "ts", "tag"]) == expected


@pytest.mark.parametrize("pieces", ["one table", "two tables"])
def test_partition_values_making_one_path_fill_one_file_group_per_bucket(tmp_path: Path, pieces: str) -> None:
    """A null partition value and the literal default partition name make the same partition path: the split
    groups rows by path (hudi_ds.keys.partition_path.partition_paths keeps its paths distinct), so each bucket of
    that partition gets one file group holding both kinds of rows, not two groups claiming one bucket."""
    n = 600
    load = load_rows(0, n).set_column(2, "dt", pa.array(
        [(None, "__HIVE_DEFAULT_PARTITION__", "2024-01-01")[i % 3] for i in range(n)], pa.string()))
    t = HudiTable.create(str(tmp_path / "t"), table_name="t", record_key="id", ordering_field="ts",
                         partition_by="dt", buckets=2)
    t.write(load if pieces == "one table" else [load.slice(0, 200), load.slice(200)], operation="bulk_insert")
    default = sorted((tmp_path / "t" / "__HIVE_DEFAULT_PARTITION__").glob("*.parquet"))
    assert len(default) == 2 and len({p.name[:8] for p in default}) == 2  # one base file per bucket
    assert sum(pq.read_metadata(p).num_rows for p in default) == 2 * n // 3
    got = rows(t.to_arrow(), ["id", "name"])
    assert got == rows(load, ["id", "name"]) == rows(hudi_rs(t.path), ["id", "name"])
