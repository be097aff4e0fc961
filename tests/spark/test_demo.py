"""The README's main job runs in a short mode and its self-check passes."""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

pytestmark = pytest.mark.slow


def test_demo_short_run(tmp_path):
    env = dict(os.environ, PYSPARK_PYTHON=sys.executable, PYSPARK_DRIVER_PYTHON=sys.executable)
    proc = subprocess.run([sys.executable, "-m", "hudi_ds.demo", "--seconds", "10", "--path", str(tmp_path / "rides")],
                          capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "the model holds" in proc.stdout and "MISMATCH" not in proc.stdout
    assert "hudi-py validate" in proc.stdout
