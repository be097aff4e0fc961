"""Every write option of the registry acts through Spark's `format("hudi-py")` writes as through the Python API
(the same probes as tests/test_write_options.py, from write_option_probes.py)."""

from __future__ import annotations

from typing import Any

import pyarrow as pa
import pytest
from write_option_probes import PROBES, Write

from hudi_ds.config.option_parsing import OPTION_SPECS

pytestmark = [pytest.mark.spark]


def spark_write(spark: Any) -> Write:
    def write(path: str, data: pa.Table, options: dict[str, str]) -> None:
        spark.createDataFrame(data).coalesce(1).write.format("hudi-py").options(**options).mode("append").save(path)

    return write


@pytest.mark.parametrize("spec", [s for s in OPTION_SPECS if s.scope == "write"], ids=lambda s: s.key)
def test_every_write_option_acts_through_spark(spark, tmp_path, spec):
    assert spec.name in PROBES, (f"{spec.key}: no probe shows what this write option does; add one to "
                                 "tests/write_option_probes.py")
    PROBES[spec.name](spark_write(spark), str(tmp_path / "t"))
