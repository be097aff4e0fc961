"""How an option is declared: its field (canonical Apache Hudi key, aliases, scope, doc), the base of the option
groups, and the value types several groups share."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

Scope = Literal["table", "write", "read", "service", "storage"]
SCOPES: tuple[Scope, ...] = ("table", "write", "read", "service", "storage")
CleanPolicyName = Literal["KEEP_LATEST_COMMITS", "KEEP_LATEST_FILE_VERSIONS", "KEEP_LATEST_BY_HOURS"]


def opt(key: str, default: Any, doc: str, *aliases: str, scope: Scope = "write") -> Any:
    """One option: `key` is the canonical (Apache Hudi Spark) name; `aliases` are also accepted. `scope` says
    what it configures: the table's shape (fixed at creation), writes, reads, the table services that run after
    each commit, or storage access."""
    return Field(default, description=doc, json_schema_extra={"key": key, "aliases": list(aliases), "scope": scope})


class OptionGroup(BaseModel):
    """The options of one concept; HudiOptions joins the groups into one frozen model. Validator names must be
    unique across the groups: pydantic keys validators by name, so a later group's would replace an earlier's."""

    model_config = ConfigDict(frozen=True, extra="forbid")


def lower_name(v: Any) -> Any:
    """A lower-case choice, with the spellings Apache Hudi also takes."""
    if isinstance(v, str):
        v = v.strip().lower()
        return {"uncompressed": "none", "incr": "incremental", "readoptimized": "read_optimized"}.get(v, v)
    return v


def upper_name(v: Any) -> Any:
    return v.strip().upper() if isinstance(v, str) else v


def at_least_one(v: int) -> int:
    if v < 1:
        raise ValueError("must be at least 1")
    return v
