"""Spark's side of the option registry (hudi_ds.config.options): Spark hands options over lower-cased and as
strings, with its own settings and the storage options (`AWS_ENDPOINT_URL`, ...) mixed in; everything else is
the registry's."""

from __future__ import annotations

from collections.abc import Mapping

from hudi_ds.config.option_parsing import parse_options
from hudi_ds.config.options import HudiOptions
from hudi_ds.storage.storage_options import is_storage_key, normalize_storage_options

SPARK_PREFIXES = ("spark.", "__")


def parse_spark_options(options: Mapping[str, str]) -> HudiOptions:
    return parse_options({k: v for k, v in options.items() if not is_storage_key(k)},
                         tolerated_prefixes=SPARK_PREFIXES)


def spark_storage_options(options: Mapping[str, str], session: Mapping[str, str] | None = None) -> dict[str, str]:
    """Storage options given as data source options, over those taken from the session's S3A settings."""
    given = normalize_storage_options({k: v for k, v in options.items() if is_storage_key(k)})
    return {**(session or {}), **given}
