"""The command reports as HTML, for notebooks (`HudiTable._repr_html_`): what `hudi-py info` and `hudi-py
timeline` show in a terminal, as HTML tables."""

from __future__ import annotations

from html import escape
from typing import Any

LAST_COMMITS = 5


def _cell(value: Any) -> str:
    if value is None or value == "":
        return "<span style='opacity:0.5'>-</span>"
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, list):
        return escape(", ".join(str(v) for v in value)) or _cell(None)
    return escape(str(value))


def _table(header: list[str], rows: list[list[Any]]) -> str:
    head = "".join(f"<th style='text-align:left'>{escape(h)}</th>" for h in header)
    body = "".join("<tr>" + "".join(f"<td style='text-align:left'>{_cell(v)}</td>" for v in row) + "</tr>"
                   for row in rows)
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>"


def _properties(rows: list[tuple[str, Any]]) -> str:
    body = "".join(f"<tr><th style='text-align:left'>{escape(k)}</th><td style='text-align:left'>{_cell(v)}</td></tr>"
                   for k, v in rows)
    return f"<table><tbody>{body}</tbody></table>"


def table_summary(info: dict[str, Any], commits: list[dict[str, Any]]) -> str:
    """A table's configuration, partitions and schema (`report.info`) and its last commits (`report.timeline`)."""
    cfg, parts, size = info["config"], info["partitions"], info["size"]
    preview = ", ".join(p or "(table root)" for p in parts["first"])
    more = f", ... ({parts['count'] - len(parts['first'])} more)" if parts["count"] > len(parts["first"]) else ""
    properties = _properties([
        ("path", info["path"]),
        ("type", cfg["table_type"]),
        ("table version", cfg["version"]),
        ("record key", cfg["record_key_fields"] or "none (generated keys, append-only)"),
        ("ordering field", cfg["ordering_field"]),
        ("partition fields", cfg["partition_fields"]),
        ("partitions", f"{parts['count']}" + (f": {preview}{more}" if parts["count"] else "")),
        ("file groups", info["file_groups"]),
        ("latest slices", f"{size['live_files']} files, {size['live_bytes']:,} bytes"),
    ])
    schema = _table(["column", "type", "nullable"], [[f["name"], f["type"], f["nullable"]] for f in info["schema"]])
    last = commits[-LAST_COMMITS:][::-1]
    history = _table(["requested", "completed", "action", "state", "operation", "rows written", "deleted"],
                     [[c["requested_time"], c["completion_time"], c["action"], c["state"], c.get("operation"),
                       c.get("rows_written"), c.get("rows_deleted")] for c in last])
    return (f"<div><strong>Hudi table {escape(cfg['name'])}</strong>{properties}"
            f"<details open><summary>schema ({len(info['schema'])} columns)</summary>{schema}</details>"
            f"<details open><summary>last commits ({len(last)} of {len(commits)}; HudiTable.history() lists "
            f"them all)</summary>{history}</details></div>")
