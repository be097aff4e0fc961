"""Copies of tables Apache Hudi 1.x wrote with a metadata table (column_stats, partition_stats, record_index, and
secondary indexes), written by hudi-py for longer than one commit: upserts until compaction and cleaning run, a
delete, then a rollback of the last commit. After every step the metadata table equals what the files say
(`hudi-py validate`): the statistics Hudi kept of its log files go when a clean deletes those files, and a completed
clean cannot be rolled back (its files are gone), as in Hudi."""

from __future__ import annotations

import shutil

import pyarrow as pa
import pyarrow.compute as pc
import pytest
from tables import hudi_rs, rows

from hudi_ds import HudiTable, InstantStateError
from hudi_ds.cli.validate import validate


@pytest.mark.parametrize("name", ["quickstart_mor_avro_v8_trips_8i3u1d", "mor_avro_v9_txns_simple_meta",
                                  "cow_v9_txns_simple_meta"])
def test_many_writes_keep_the_metadata_table_hudi_wrote_in_step(reference_dir, tmp_path, name):
    path = tmp_path / name
    shutil.copytree(reference_dir / name, path)
    t = HudiTable(str(path))
    held = t.to_arrow()
    data = held.drop_columns([c for c in held.column_names if c.startswith("_hoodie")])
    ordering = t.config.ordering_field
    assert ordering is not None
    for i in range(12):  # enough delta commits for the default inline compaction and cleaning to run
        row = data.slice(i % data.num_rows, 1)
        later = pc.add(row[ordering], pa.scalar(1000 + i, row.schema.field(ordering).type))
        t.write(row.set_column(row.schema.get_field_index(ordering), ordering, later))
        report = validate(str(path))
        assert report["ok"], (i, report["errors"][:3])
    actions = {i.action for i in HudiTable(str(path)).timeline()}
    assert "clean" in actions  # the services ran: Hudi's log files (and their statistics) were cleaned
    t.write(data.slice(1, 1), operation="delete")
    last = HudiTable(str(path)).timeline()[-1]
    if last.action == "clean":
        with pytest.raises(InstantStateError, match="not a commit"):
            t.rollback(last.requested_time)
    last_commit = [i for i in HudiTable(str(path)).timeline() if i.action in ("commit", "deltacommit")][-1]
    t.rollback(last_commit.requested_time)
    report = validate(str(path))
    assert report["ok"], report["errors"][:3]
    columns = [c for c in data.column_names]
    assert rows(HudiTable(str(path)).to_arrow(), columns) == rows(hudi_rs(str(path)), columns)
