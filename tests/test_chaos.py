"""The chaos suite's short CI variant: a few SIGKILLs per Python API writer kind, on local disk and on S3; every
round must be consistent (no duplicate, no lost write, no partial commit), read the same in hudi-rs, and validate
clean, and every read racing the writers must see a committed state (on S3 four of the eight kinds). The full run (`./run chaos --kills 100`) is
in benchmarks/ and its figures in benchmarks/results/REPORT.md; the Spark streaming kinds have their crash tests
in tests/spark (test_streaming_sink, test_streaming_reader_crash)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

CHAOS = Path(__file__).resolve().parents[1] / "benchmarks" / "chaos.py"
# the version 9 kinds run with the metadata table on (the default there); validate checks it after each kill
KINDS = ["api_mor", "api_cow", "services", "two_writers", "api_mor_v9", "api_cow_v9", "services_v9", "two_writers_v9",
         "api_mor_simple"]


# on S3 (moto answers slowly) one kind of each writer shape, versions 6 and 9 alternating
S3_KINDS = ["api_mor", "api_cow_v9", "services_v9", "two_writers"]


@pytest.mark.slow
@pytest.mark.parametrize("store, kills, kinds", [("local", 3, KINDS), ("s3", 1, S3_KINDS)])
def test_writers_killed_at_random_moments_lose_nothing(tmp_path, store, kills, kinds):
    out = tmp_path / "chaos.json"
    proc = subprocess.run([sys.executable, str(CHAOS), "--kills", str(kills), "--store", store, "--seed", "3",
                           "--kinds", ",".join(kinds), "--json", str(out)], capture_output=True, text=True, timeout=600)
    table = proc.stdout[proc.stdout.find("store:"):]
    assert proc.returncode == 0, table + proc.stderr[-3000:]
    results = json.loads(out.read_text())
    assert set(results) == set(kinds)
    for t in results.values():
        assert t["kills"] >= kills and t["consistent"] == t["rounds"] == t["hudi_rs_agrees"] == t["validate_clean"]
        assert t["duplicates"] == t["lost"] == t["partial"] == t["bad_reads"] == 0 and not t["failures"], table
        assert t["reads"] > 0
