"""Shared test fixtures: reference tables, the hudi-rs reader, and comparisons of row sets."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

sys.path.insert(0, str(Path(__file__).parent))

from tables import REFERENCE_DIR  # noqa: E402

# Every JVM the tests start (the shared session, the kill tests' jobs, local-cluster executors) compiles with C1
# only: the tests' Spark jobs are small and short, and the optimising compiler spent about a third of their CPU
# (a session start 28-30 -> 18 CPU-s, a run of small writes and reads 83-85 -> 58 CPU-s, on two busy cores).
_C1_ONLY = "-XX:TieredStopAtLevel=1"
if _C1_ONLY not in os.environ.get("JAVA_TOOL_OPTIONS", ""):
    os.environ["JAVA_TOOL_OPTIONS"] = f"{os.environ.get('JAVA_TOOL_OPTIONS', '')} {_C1_ONLY}".strip()


def pytest_collection_finish(session: pytest.Session) -> None:
    """When Spark tests are to run, their drivers map their classes from one archive (tests/spark_class_archive):
    made by the first process to get here (the other xdist worker waits for it), used by every Spark driver of
    this process and its children."""
    if os.environ.get("HUDI_DS_TEST_CLASS_ARCHIVE") == "0":
        return
    if not any("spark" in item.path.parts or item.get_closest_marker("spark") for item in session.items):
        return
    import spark_class_archive

    path = spark_class_archive.ensure_archive()
    if path is not None:
        spark_class_archive.use_archive(path)


@pytest.fixture(scope="session")
def reference_dir() -> Path:
    if not REFERENCE_DIR.is_dir():
        if os.environ.get("CI") == "true":
            pytest.fail(f"{REFERENCE_DIR} is missing; CI must run beside ../shared/reference-tables")
        pytest.skip(f"{REFERENCE_DIR} is absent (reference tables live in ../shared)")
    return REFERENCE_DIR


@pytest.fixture(scope="session")
def s3():
    """moto's S3 server on a free port of 127.0.0.1, for the whole session."""
    import s3_server

    server, handle = s3_server.start()
    yield handle
    server.stop()


@pytest.fixture
def s3_table(s3) -> tuple[str, dict[str, str]]:
    """A fresh bucket: the URI of a table in it and the storage options to reach it."""
    return f"s3://{s3.new_bucket()}/tables/trips", s3.options()



def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    """The files holding slow tests first, in their order: `./run test` hands whole files to two pytest-xdist
    workers in collection order (--dist loadfile --no-loadscope-reorder), so the long kill-and-restart files start
    at once instead of last."""
    slow_files = {item.path for item in items if item.get_closest_marker("slow")}
    items.sort(key=lambda item: item.path not in slow_files)
