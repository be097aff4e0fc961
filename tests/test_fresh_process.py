"""What a fresh process pays (issue 32): `import hudi_ds` loads no optional engine, none of the writer, neither
pydantic (the option registry) nor fastavro, pyarrow.parquet or the HFile package; a read of a table opened
without options never builds the option registry, and the first read of a small table does not import polars to
decode a few Avro log records. Each check runs in a new interpreter, where sys.modules shows what was imported."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pyarrow as pa
import pytest

from hudi_ds import ConfigError, HudiTable
from hudi_ds.log.decoder_choice import POLARS_AFTER_RECORDS


def _fresh(script: str, *args: str) -> dict[str, object]:
    """Run `script` in a new interpreter; it prints one JSON object, returned."""
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, check=True)
    return json.loads(done.stdout)


_LOADED = """
import json, sys
{statement}
prefixes = {prefixes!r}
print(json.dumps({{"loaded": sorted(m for m in sys.modules if any(m == p or m.startswith(p + ".") for p in prefixes)),
                  "rows": rows}}))
"""

_NOT_AT_IMPORT = ["pyspark", "polars", "duckdb", "pandas", "hudi_ds.spark", "hudi_ds.cli", "hudi_ds.write",
                  "hudi_ds.services", "hudi_ds.metadata.sync", "hudi_ds.upgrade", "hudi_ds.recovery",
                  "hudi_ds.read.changes", "pydantic", "hudi_ds.config.options", "fastavro", "pyarrow.parquet",
                  "hudi_ds.hfile", "hudi_ds.metadata.listing", "hudi_ds.read.lazy"]


def test_import_loads_no_engine_and_no_writer() -> None:
    out = _fresh(_LOADED.format(statement="import hudi_ds; rows = None; hudi_ds.HudiTable", prefixes=_NOT_AT_IMPORT))
    assert out["loaded"] == []


def _small_mor_table(path: Path) -> pa.Table:
    """A merge-on-read table whose logs hold Avro data blocks and delete blocks; returns the rows it holds."""
    table = HudiTable.create(str(path), table_name="t", record_key="id", ordering_field="ts", table_type="MERGE_ON_READ",
                             buckets=2, options={"hoodie.logfile.data.block.format": "avro"})
    table.write(pa.table({"id": list(range(100)), "ts": [1] * 100, "v": ["a"] * 100}), operation="insert")
    table.write(pa.table({"id": list(range(0, 100, 2)), "ts": [2] * 50, "v": ["b"] * 50}), operation="upsert")
    table.write(pa.table({"id": list(range(0, 100, 5)), "ts": [3] * 20}), operation="delete")
    return pa.table({"id": [i for i in range(100) if i % 5], "v": ["a" if i % 2 else "b" for i in range(100) if i % 5]})


def test_first_read_of_a_small_table_does_not_import_polars(tmp_path: Path) -> None:
    expected = _small_mor_table(tmp_path / "t")
    read = ("import hudi_ds; t = hudi_ds.HudiTable(sys.argv[1]).to_arrow(columns=['id', 'v']).sort_by('id'); "
            "rows = t.to_pydict()")
    out = _fresh(_LOADED.format(statement=read, prefixes=["polars", "pydantic"]), str(tmp_path / "t"))
    assert out["rows"] == expected.to_pydict()
    assert out["loaded"] == []


def test_options_are_validated_when_the_table_is_opened(tmp_path: Path) -> None:
    """The registry is built lazily only where no option is given: a bad one still fails before any read."""
    _small_mor_table(tmp_path / "t")
    with pytest.raises(ConfigError, match="hoodie.metadata.enable"):
        HudiTable(str(tmp_path / "t"), options={"hoodie.metadata.enable": "maybe"})
    with pytest.raises(ConfigError, match="mapping"):
        HudiTable(str(tmp_path / "t"), options=[("hoodie.metadata.enable", "true")])  # type: ignore[arg-type]
    opened = HudiTable(str(tmp_path / "t"))
    assert opened.options.metadata_enable is None and opened.options.clean_retain_commits == 10


_DECODE = """
import json, sys
import pyarrow as pa
from hudi_ds.log import decode_avro_data_block, decode_delete_block, encode_avro_data_block, encode_delete_block
from hudi_ds.log import read_blocks
from hudi_ds.schema import arrow_to_avro
def deletes(n):
    raw = encode_delete_block([f"k{i}" for i in range(n)], ["p"] * n, list(range(n)), "long", "20240101000000000")
    (block,) = read_blocks(raw, "f.log")
    d = decode_delete_block(block, "f.log")
    return [d.record_keys.to_pylist(), d.ordering_values.to_pylist(), d.natural.tolist(), "polars" in sys.modules]
def rows(n):
    table = pa.table({"k": [f"k{i}" for i in range(n)], "v": list(range(n))})
    raw = encode_avro_data_block(table, arrow_to_avro(table.schema, "t"), "20240101000000000")
    (block,) = read_blocks(raw, "f.log")
    got = decode_avro_data_block(block, "f.log")
    return [got["v"].to_pylist() == list(range(n)), "polars" in sys.modules]
n = int(sys.argv[1])
print(json.dumps({"small": rows(10), "deletes": deletes(n), "large": rows(n)}))
"""


def test_polars_decodes_once_a_block_is_large_enough() -> None:
    """A few Avro records take fastavro, a large block polars; delete lists of any size take neither (they are
    scanned: hudi_ds.log.delete_scan)."""
    n = POLARS_AFTER_RECORDS
    out = _fresh(_DECODE, str(n))
    assert out["small"] == [True, False]
    assert out["deletes"] == [[f"k{i}" for i in range(n)], list(range(n)), [i == 0 for i in range(n)], False]
    assert out["large"] == [True, True]
