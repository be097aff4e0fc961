"""Decoding the change data of one upsert: polars' Avro reader (today's first decoder) against jetliner (a Rust
Avro reader, a polars plugin) and fastavro (today's fallback), on the same bytes.

    ./run py benchmarks/bench_avro_decode.py [--rows 2000000] [--repeat 7]

Builds bench_lakes' table with change data written at commit time (hoodie.table.cdc.enabled, DATA_BEFORE_AFTER:
nullable before/after records of long, string, double, long, string, int), upserts its 10% (half updates, half
new keys) and takes the CDC blocks that upsert wrote. polars and jetliner read them as the one container file
hudi_ds.log.blocks wraps them into (each record preceded by its length as a fixed(4) field); jetliner only
takes file paths, so its time includes writing the container to an in-memory file (memfd). fastavro decodes the
blocks one by one, as the fallback does. Each timing goes as far as an Arrow table; the decoders take turns, and
every figure is the median of `--repeat` turns (the machine is shared: single runs are noise). Checks that the
three decoders give the same rows. Issue 32: adopt jetliner if it is faster than polars' reader here.
"""

from __future__ import annotations

import argparse
import io
import json
import os
import shutil
import statistics
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
from common import lakes_data  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402
from hudi_ds.log import blocks as avro_blocks  # noqa: E402
from hudi_ds.log import polars_avro  # noqa: E402
from hudi_ds.log.format import BlockType, LogBlock, read_blocks  # noqa: E402
from hudi_ds.schema.meta import fit_table  # noqa: E402


def _files(root: Path) -> set[Path]:
    return {p for p in root.rglob("*") if p.is_file() and ".hoodie" not in p.parts}


def upsert_cdc_blocks(rows: int, work: Path) -> list[LogBlock]:
    """The CDC blocks the upsert of bench_lakes writes into a table of `rows` rows."""
    base, upsert, _ = lakes_data(rows)
    t = HudiTable.create(str(work), table_name="bench", record_key="id", ordering_field="ts", partition_by="dt",
                         buckets=4, options={"hoodie.table.cdc.enabled": "true"})
    t.write(base, operation="bulk_insert")
    before = _files(work)
    t.write(upsert)
    out = []
    for path in sorted(_files(work) - before):
        out += [b for b in read_blocks(path.read_bytes(), str(path)) if b.block_type == BlockType.CDC_DATA]
    return out


def decoders(blocks: list[LogBlock]) -> dict[str, Callable[[], pa.Table]]:
    """name -> a call decoding every block's records into one Arrow table of the blocks' natural schema
    (jetliner's only when it is installed: it is no dependency of hudi-py)."""
    import polars as pl

    try:
        import jetliner
    except ImportError:
        jetliner = None

    schema_json = blocks[0].schema_json or ""
    assert all(b.schema_json == schema_json for b in blocks), "the upsert's CDC blocks share one schema"
    _, array_schema, natural = avro_blocks._avro_codec(schema_json)  # noqa: SLF001
    polars_schema = polars_avro.polars_schema(schema_json)
    assert polars_schema is not None
    count = sum(int.from_bytes(b.content[4:8], "big", signed=True) for b in blocks)
    ocf = polars_avro.container_bytes(polars_schema, count, [memoryview(b.content)[8:] for b in blocks])
    length = polars_avro.LENGTH_FIELD

    def polars_reader() -> pa.Table:
        return fit_table(pl.read_avro(io.BytesIO(ocf)).to_arrow().drop_columns([length]), natural)

    def jetliner_reader() -> pa.Table:
        fd = os.memfd_create("hudi_ds_avro")
        try:
            os.write(fd, ocf)
            # one batch: jetliner's fastest setting here (its default, 100,000 rows, concatenates batches)
            frame = jetliner.read_avro(f"/proc/self/fd/{fd}", glob=False, batch_size=count)
        finally:
            os.close(fd)
        return fit_table(frame.to_arrow().drop_columns([length]), natural)

    def fastavro_reader() -> pa.Table:
        return pa.concat_tables([
            avro_blocks._decode_fastavro(array_schema, *avro_blocks._record_bytes(b, "cdc"), natural, b, "cdc")  # noqa: SLF001
            for b in blocks])

    calls = {"polars": polars_reader, "jetliner": jetliner_reader, "fastavro": fastavro_reader}
    if jetliner is None:
        del calls["jetliner"]
    return calls


def measure(blocks: list[LogBlock], repeat: int) -> dict[str, float]:
    calls = decoders(blocks)
    times: dict[str, list[float]] = {name: [] for name in calls}
    outputs: dict[str, pa.Table] = {}
    for _ in range(repeat):
        for name, call in calls.items():  # interleaved: contention on the shared machine hits every decoder alike
            start = time.perf_counter()
            outputs[name] = call()
            times[name].append(time.perf_counter() - start)
    reference = outputs["fastavro"]
    for name, table in outputs.items():
        assert table.equals(reference), f"{name} decodes other rows than fastavro"
    f = {f"{name}_s": statistics.median(ts) for name, ts in times.items()}
    f["records"] = reference.num_rows
    f["blocks"] = len(blocks)
    f["container_mib"] = sum(len(b.content) for b in blocks) / 2**20
    for name in calls:
        f[f"{name}_speed_vs_polars"] = f["polars_s"] / f[f"{name}_s"]
    return f


def main(argv: list[str] | None = None) -> dict[str, float]:
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--rows", type=int, default=2_000_000, help="table rows (the upsert is 10%%)")
    ap.add_argument("--repeat", type=int, default=7)
    ap.add_argument("--json")
    args = ap.parse_args(argv)
    work = Path(tempfile.mkdtemp(prefix="hudi_ds_avro_decode_"))
    try:
        blocks = upsert_cdc_blocks(args.rows, work / "t")
    finally:
        shutil.rmtree(work, ignore_errors=True)
    f = measure(blocks, args.repeat)
    print(f"change data of one upsert: {f['records']:,.0f} records in {f['blocks']:.0f} CDC blocks "
          f"({f['container_mib']:,.1f} MiB), median of {args.repeat}")
    for name in ("polars", "jetliner", "fastavro"):
        if f"{name}_s" not in f:
            print(f"  {name:9s} not installed (./run py -m pip install {name})")
            continue
        print(f"  {name:9s} {f[f'{name}_s']:.3f} s  {f['records'] / f[f'{name}_s']:>12,.0f} records/s  "
              f"speed vs polars {f[f'{name}_speed_vs_polars']:.2f}x")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))
    return f


if __name__ == "__main__":
    main()
