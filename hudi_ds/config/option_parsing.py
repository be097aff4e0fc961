"""Parsing options: any key spelling Apache Hudi reads (canonical keys, aliases, case-insensitive) onto
`HudiOptions` (hudi_ds.config.options, the registry itself). `OPTION_SPECS` lists every declared option
(docs/options.md is generated from it); `parse_options` answers Hudi keys of features hudi-py does not implement
by naming the feature (hudi_ds.config.hudi_features) and rejects other unknown keys with the closest valid name.
"""

from __future__ import annotations

import difflib
import re
import warnings
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from hudi_ds.config.hudi_features import (
    FEATURES,
    NOT_IMPLEMENTED_YET,
    TUNING_KEYS,
    HudiFeature,
    IgnoredOptionWarning,
    feature_of,
)
from hudi_ds.config.options import HudiOptions, validated_options
from hudi_ds.errors import ConfigError


@dataclass(frozen=True)
class OptionSpec:
    name: str  # HudiOptions field
    key: str
    aliases: tuple[str, ...]
    default: Any
    doc: str
    scope: str
    type: str


def _specs() -> list[OptionSpec]:
    out = []
    for name, f in HudiOptions.model_fields.items():
        extra = f.json_schema_extra or {}
        assert isinstance(extra, dict)
        out.append(OptionSpec(
            name=name, key=str(extra["key"]), aliases=tuple(extra.get("aliases") or ()),  # type: ignore[arg-type]
            default=f.default, doc=f.description or "", scope=str(extra.get("scope", "write")),
            type=str(f.annotation).replace("typing.", ""),
        ))
    return out


OPTION_SPECS: list[OptionSpec] = _specs()
_BY_KEY: dict[str, OptionSpec] = {}
for _spec in OPTION_SPECS:
    for _k in (_spec.key, *_spec.aliases):
        _BY_KEY[_k.lower()] = _spec


def _suggest(key: str) -> str:
    """The spelling closest to a misspelled key (the one the user was likely after: an alias stays an alias)."""
    names = list(_BY_KEY) + sorted(TUNING_KEYS)
    close = [n for n in names if n.endswith("." + key)][:1]  # "recordkey.field" -> "hoodie...recordkey.field"
    close = close or difflib.get_close_matches(key, names, n=1, cutoff=0.6)
    if not close:
        # compare the last segments too: "hoodie.datasource.write.recordkey.feild" vs "...recordkey.field"
        tail = {n.rsplit(".", 1)[-1]: n for n in names}
        hit = difflib.get_close_matches(key.rsplit(".", 1)[-1], list(tail), n=1, cutoff=0.75)
        close = [tail[hit[0]]] if hit else []
    if close:
        return f"; did you mean {close[0]!r}?"
    return "; see docs/options.md for the valid options"


def _hudi_feature(key: str) -> HudiFeature | None:
    """The unimplemented Apache Hudi feature a key configures; a key only under a feature's prefix that is a near
    miss of a registry key is taken for a typo of that key instead ("hoodie.metadata.enabled")."""
    feature = feature_of(key)
    if feature is None or feature.names(key):
        return feature
    return None if difflib.get_close_matches(key, list(_BY_KEY), n=1, cutoff=0.9) else feature


def _answer_features(given: dict[str, dict[str, str]], warn: bool) -> None:
    """Refuse the keys of unimplemented features that could change the data; warn about the others (`warn`)."""
    for name, keys in given.items():
        feature = next(f for f in FEATURES + NOT_IMPLEMENTED_YET if f.name == name)
        engaged = feature.engaged(keys)
        if not engaged:
            continue
        listed = ", ".join(f"{k}={keys[k]!r}" for k in engaged)
        if feature.effect == "error":
            raise ConfigError(f"{listed}: {feature.name} is an Apache Hudi feature hudi-py does not implement, "
                              f"and ignoring it could change the data. {feature.answer}")
        if warn:
            warnings.warn(f"hudi-py ignores {listed}: {feature.name} is not implemented; {feature.answer}",
                          IgnoredOptionWarning, stacklevel=4)


def _text(value: Any) -> Any:
    """Options arrive as strings from Spark and as Python values from the Python API: one form for both."""
    if value is None or isinstance(value, (list, tuple)):
        return list(value) if value is not None else None
    if isinstance(value, bool):
        return str(value).lower()
    return str(value).strip()


def parse_options(options: Mapping[str, Any] | None, *, tolerated_prefixes: tuple[str, ...] = ()) -> HudiOptions:
    """Validate options (any key spelling, case-insensitive); ConfigError names the bad key and the fix.

    Keys starting with one of `tolerated_prefixes` are skipped (Spark passes its own settings along). Apache Hudi
    keys of features hudi-py does not implement are refused or warned about (hudi_ds.config.hudi_features)."""
    if options is not None and not isinstance(options, Mapping):
        raise ConfigError(
            f"options must be a mapping of option keys to values, such as {{'hoodie.clean.commits.retained': 5}}; "
            f"got a {type(options).__name__} ({options!r:.80}). Pass dict(...) of key/value pairs")
    values: dict[str, Any] = {}
    given_as: dict[str, str] = {}
    foreign: dict[str, dict[str, str]] = {}
    for raw_key, value in (options or {}).items():
        key = str(raw_key).strip().lower()
        spec = _BY_KEY.get(key)
        if spec is None:
            if key in TUNING_KEYS or (tolerated_prefixes and key.startswith(tolerated_prefixes)):
                continue
            feature = _hudi_feature(key)
            if feature is None:
                raise ConfigError(f"unknown option {raw_key!r}{_suggest(key)}")
            foreign.setdefault(feature.name, {})[key] = str(_text(value))
            continue
        text = _text(value)
        if spec.name in values and values[spec.name] != text:
            raise ConfigError(
                f"options {given_as[spec.name]!r}={values[spec.name]!r} and {raw_key!r}={text!r} set the same "
                f"setting ({spec.key}) to different values; keep one"
            )
        values[spec.name] = text
        given_as[spec.name] = str(raw_key)
    _answer_features(foreign, warn=False)
    opts = validated_options(values, given_as)
    _answer_features(foreign, warn=True)
    return opts


def key_of(field: str) -> str:
    """The canonical key of a HudiOptions field."""
    return next(s.key for s in OPTION_SPECS if s.name == field)



def default_table_name(path: str) -> str:
    tail = path.rstrip("/").rsplit("/", 1)[-1] or "hudi_table"
    name = re.sub(r"[^0-9A-Za-z_]", "_", tail)
    return name if name and not name[0].isdigit() else f"t_{name}"
