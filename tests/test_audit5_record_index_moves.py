"""Audit round 2 (issue 28): with moves on (hoodie.record.index.update.partition.path=true) the record index weighs
a moving row against the record it holds as GLOBAL_SIMPLE and GLOBAL_BLOOM do: Apache Hudi tags every global
index through HoodieIndexUtils.tagGlobalLocationBackToRecords, whose merge keeps an outranking held record where
it is; a newer row moves the key. Our reader and hudi-rs read the same."""

from __future__ import annotations

import pyarrow as pa
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from tables import hudi_rs, rows
from test_audit_index_moves import STEP, HudiModel, replay_against_model

from hudi_ds import HudiTable

MOVES = {"RECORD_INDEX": "hoodie.record.index.update.partition.path", "GLOBAL_SIMPLE":
         "hoodie.simple.index.update.partition.path", "GLOBAL_BLOOM": "hoodie.bloom.index.update.partition.path"}
COLUMNS = ["id", "dt", "ts", "v", "_hoodie_partition_path"]


def history(base: str, index: str, table_type: str, integer_keys: bool) -> list[list[tuple[object, ...]]]:
    """The rows after each of three writes moving keys with older, newer and equal ordering values."""
    t = HudiTable.create(base, table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, options={"hoodie.index.type": index, MOVES[index]: "true",
                                                         "hoodie.write.table.version": "9",
                                                         "hoodie.metadata.record.index.enable": "true",
                                                         "hoodie.datasource.write.hive_style_partitioning": True})

    def ids(*keys: int) -> pa.Array:
        return pa.array(keys, pa.int64()) if integer_keys else pa.array([f"k{k}" for k in keys])

    seen = []
    t.write(pa.table({"id": ids(1, 2, 3, 4), "ts": [5, 5, 5, 5], "v": ["a1", "a2", "a3", "a4"],
                      "dt": ["p1", "p1", "p1", "p2"]}))
    # k1 older: stays in p1 as it was; k2 newer: moves to p2; k3 equal: moves (the latest write wins a tie);
    # k4 older in its own partition: the merge keeps the held row
    t.write(pa.table({"id": ids(1, 2, 3, 4), "ts": [3, 7, 5, 1], "v": ["b1", "b2", "b3", "b4"],
                      "dt": ["p2", "p2", "p2", "p2"]}))
    seen.append(rows(t.to_arrow(columns=COLUMNS), COLUMNS))
    # k1 again, older, from a third partition, and k2 older from the partition it left
    t.write(pa.table({"id": ids(1, 2), "ts": [4, 6], "v": ["c1", "c2"], "dt": ["p3", "p1"]}))
    seen.append(rows(t.to_arrow(columns=COLUMNS), COLUMNS))
    t.write(pa.table({"id": ids(1), "ts": [9], "v": ["d1"], "dt": ["p3"]}))
    if table_type == "MERGE_ON_READ":
        t.run_compaction()
    seen.append(rows(t.to_arrow(columns=COLUMNS), COLUMNS))
    assert rows(hudi_rs(base), COLUMNS) == seen[-1], index
    return seen


@pytest.mark.parametrize("table_type", ["COPY_ON_WRITE", "MERGE_ON_READ"])
@pytest.mark.parametrize("integer_keys", [False, True])
def test_the_record_index_keeps_an_outranking_record_where_it_is(tmp_path, table_type, integer_keys):
    def key(k: int) -> object:
        return k if integer_keys else f"k{k}"

    k2, k3, k4 = (key(2), "p2", 7, "b2", "dt=p2"), (key(3), "p2", 5, "b3", "dt=p2"), (key(4), "p2", 5, "a4", "dt=p2")
    held = (key(1), "p1", 5, "a1", "dt=p1")
    want = [sorted(w, key=repr) for w in ([held, k2, k3, k4], [held, k2, k3, k4],
                                          [(key(1), "p3", 9, "d1", "dt=p3"), k2, k3, k4])]
    for index in ("GLOBAL_SIMPLE", "GLOBAL_BLOOM", "RECORD_INDEX"):
        assert history(str(tmp_path / index), index, table_type, integer_keys) == want, index


@pytest.mark.parametrize("table_type", ["MERGE_ON_READ", "COPY_ON_WRITE"])
@settings(max_examples=10, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(history=st.lists(STEP, min_size=3, max_size=7), integer_keys=st.booleans())
def test_record_index_histories_with_moves_equal_the_model_of_hudis_tagging(tmp_path_factory, table_type, history,
                                                                            integer_keys):
    """tests/test_audit_index_moves.py's model of Hudi's global tagging, for the record index with moves on."""
    path = tmp_path_factory.mktemp("t")
    t = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", partition_by="dt",
                         table_type=table_type, options={
                             "hoodie.index.type": "RECORD_INDEX", "hoodie.write.table.version": "9",
                             "hoodie.record.index.update.partition.path": "true", "hoodie.parquet.small.file.limit": "0",
                             "compaction.schedule.enabled": "false"})
    replay_against_model(t, path, HudiModel("RECORD_INDEX", True, table_type == "MERGE_ON_READ"), history, integer_keys)
