"""Spark's side of the option registry (hudi_ds.config.options): Spark hands options over lower-cased and as
strings, with its own settings mixed in; everything else is the registry's."""

from __future__ import annotations

from collections.abc import Mapping

from hudi_ds.config.options import HudiOptions, parse_options

SPARK_PREFIXES = ("spark.", "__")


def parse_spark_options(options: Mapping[str, str]) -> HudiOptions:
    return parse_options(options, tolerated_prefixes=SPARK_PREFIXES)
