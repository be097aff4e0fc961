"""Tables in S3 (moto's S3 server on 127.0.0.1, behind a counting proxy) against the same table on local disk.

    ./run py benchmarks/bench_object_store.py [--rows 1000000]

A table of `rows` rows in 8 partitions x 4 buckets (merge-on-read): the initial load, one upsert commit of
10% of the rows, and a snapshot read (32 file slices of a base and a log file each, 64 files). Prints the
requests each step issues (PUT/GET/HEAD/LIST/DELETE, counted by the proxy), wall times on local disk and on
S3 with 0 ms and with 20 ms of latency added to every request, and the ratios. Goals (issue 14): a snapshot
read issues O(partitions) LISTs, one GET per file and one timeline listing; an upsert commit O(files
written) PUTs; with 20 ms latency the read takes at most 3x its 0 ms time (parallel I/O).
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path
from typing import Any

import numpy as np
import pyarrow as pa

sys.path.insert(0, str(Path(__file__).parent))
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "tests"))
from common import checksum, make_rows, memory_figures, timed  # noqa: E402
from s3_proxy import S3Proxy  # noqa: E402
from s3_server import start as start_s3  # noqa: E402

from hudi_ds import HudiTable  # noqa: E402

LATENCY_S = 0.020
METHODS = ("PUT", "GET", "HEAD", "LIST", "DELETE", "POST")


def _counted(proxy: S3Proxy) -> dict[str, int]:
    """Requests since the last call, by kind."""
    out = {m: proxy.counts.get(m, 0) for m in METHODS}
    proxy.counts.clear()
    return out


def run(rows: int, work: Path) -> dict[str, float]:
    server, s3 = start_s3()
    proxy = S3Proxy(s3.endpoint).start()
    try:
        return _measure(rows, work, s3, proxy)
    finally:
        proxy.stop()
        server.stop()


def _measure(rows: int, work: Path, s3, proxy: S3Proxy) -> dict[str, float]:  # noqa: ANN001
    base = make_rows(np.arange(rows, dtype=np.int64), ts=1)
    upd = np.random.default_rng(4).choice(rows, size=rows // 10, replace=False).astype(np.int64)
    upsert = make_rows(upd, ts=2, seed=1)
    kw = dict(table_name="bench", record_key="id", ordering_field="ts", partition_by="dt", buckets=4,
              options={"compaction.schedule.enabled": "false"})
    f: dict[str, float] = {}

    local = HudiTable.create(str(work / "local"), **kw)
    f["local_load_s"], _ = timed(lambda: local.write(base, operation="bulk_insert"))
    f["local_upsert_s"], _ = timed(lambda: local.write(upsert))
    f["local_read_s"], expected = timed(HudiTable(local.path).to_arrow)

    uri, opts = f"s3://{s3.new_bucket()}/bench", {**s3.options(), "AWS_ENDPOINT_URL": proxy.endpoint}
    remote = HudiTable.create(uri, storage_options=opts, **kw)
    f["s3_load_s"], _ = timed(lambda: remote.write(base, operation="bulk_insert"))
    _counted(proxy)
    f["s3_upsert_s"], _ = timed(lambda: remote.write(upsert))
    f.update({f"upsert_{m.lower()}_requests": n for m, n in _counted(proxy).items()})
    f["s3_read_s"], got = timed(HudiTable(uri, storage_options=opts).to_arrow)
    f.update({f"read_{m.lower()}_requests": n for m, n in _counted(proxy).items()})
    assert checksum(got.select(["id", "amount"])) == checksum(expected.select(["id", "amount"])), "S3 != local"

    proxy.latency_s = LATENCY_S
    f["s3_read_20ms_s"], slow = timed(HudiTable(uri, storage_options=opts).to_arrow)
    f["s3_upsert_20ms_s"], _ = timed(lambda: remote.write(make_rows(upd[: rows // 50], ts=3, seed=5)))
    proxy.latency_s = 0.0
    assert checksum(slow.select(["id", "amount"])) == checksum(got.select(["id", "amount"]))
    f.update(_whole_vs_ranged(remote, proxy))
    f["read_20ms_over_0ms"] = f["s3_read_20ms_s"] / f["s3_read_s"]
    f["s3_read_over_local"] = f["s3_read_s"] / f["local_read_s"]
    f["s3_upsert_over_local"] = f["s3_upsert_s"] / f["local_upsert_s"]
    f.update(memory_figures())
    return f


class _RangedReader:
    """obstore's ReadableFile as the file object pyarrow.PythonFile wants (it checks `closed`)."""

    closed = False

    def __init__(self, f: Any) -> None:
        self.f = f

    def read(self, n: int | None = -1) -> bytes:
        return bytes(self.f.read(n)) if n is not None and n >= 0 else bytes(self.f.read())

    def seek(self, pos: int, whence: int = 0) -> int:
        return int(self.f.seek(pos, whence))

    def tell(self) -> int:
        return int(self.f.tell())

    def close(self) -> None:
        self.f.close()


def _whole_vs_ranged(table: HudiTable, proxy: S3Proxy) -> dict[str, float]:
    """Reading every base file through one whole-object GET (what ObjectStorage.open_input does) against
    ranged GETs through obstore's file reader, whole and for the first row group only (a row-group split),
    with 20 ms per request."""
    import obstore
    import pyarrow.parquet as pq

    storage = table.storage
    files = [e.path for e in storage.walk_files() if e.path.endswith(".parquet")]
    store = storage.store  # type: ignore[attr-defined]

    def whole(first_group: bool) -> int:
        rows = 0
        for rel in files:
            pf = pq.ParquetFile(storage.open_input(rel))
            rows += pf.read_row_group(0).num_rows if first_group else pf.read().num_rows
        return rows

    def ranged(first_group: bool) -> int:
        rows = 0
        for rel in files:
            reader = _RangedReader(obstore.open_reader(store, rel, buffer_size=1 << 20))
            pf = pq.ParquetFile(pa.PythonFile(reader, mode="r"))
            rows += pf.read_row_group(0).num_rows if first_group else pf.read().num_rows
        return rows

    f: dict[str, float] = {"base_files": len(files)}
    proxy.latency_s = LATENCY_S
    for name, fn in (("whole_object", whole), ("ranged", ranged)):
        _counted(proxy)
        f[f"{name}_read_20ms_s"], _ = timed(lambda fn=fn: fn(False))
        f[f"{name}_read_gets"] = _counted(proxy)["GET"]
        f[f"{name}_first_row_group_20ms_s"], _ = timed(lambda fn=fn: fn(True))
    proxy.latency_s = 0.0
    return f


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--rows", type=int, default=1_000_000)
    ap.add_argument("--json")
    args = ap.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        f = run(args.rows, Path(tmp))
    for key, value in f.items():
        print(f"{key:28s} {value:12.3f}" if isinstance(value, float) else f"{key:28s} {value:12d}")
    if args.json:
        Path(args.json).write_text(json.dumps(f, indent=1))


if __name__ == "__main__":
    main()
