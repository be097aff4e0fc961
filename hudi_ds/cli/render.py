"""Rich renderings of the command reports (the `--json` mode prints the reports themselves)."""

from __future__ import annotations

import json
from typing import Any

from rich.console import Console
from rich.markup import escape
from rich.table import Table

NONE = "[dim]-[/]"


def size(n: int | None) -> str:
    if n is None:
        return NONE
    value = float(n)
    for unit in ("B", "KiB", "MiB", "GiB", "TiB"):
        if value < 1024 or unit == "TiB":
            return f"{int(value)} {unit}" if unit == "B" else f"{value:.1f} {unit}"
        value /= 1024
    return str(n)  # pragma: no cover


def cell(value: Any) -> str:
    if value is None:
        return NONE
    if isinstance(value, bool):
        return "yes" if value else "no"
    if isinstance(value, (list, dict)):
        return escape(json.dumps(value, ensure_ascii=False, default=str))
    return escape(str(value))


def partition_label(p: str) -> str:
    return escape(p) if p else "[dim](table root)[/]"


def info(c: Console, r: dict[str, Any]) -> None:
    cfg = r["config"]
    props = Table(title=f"Hudi table [bold]{escape(cfg['name'])}[/]", show_header=False, title_justify="left")
    props.add_column(style="cyan")
    props.add_column()
    rows = [
        ("path", r["path"]),
        ("type", cfg["table_type"]),
        ("table version", cfg["version"]),
        ("timeline layout", cfg["layout_version"]),
        ("record key", ", ".join(cfg["record_key_fields"]) or "none (generated keys, append-only)"),
        ("ordering field", cfg["ordering_field"]),
        ("partition fields", ", ".join(cfg["partition_fields"]) or None),
        ("index", cfg["index_type"]),
        ("buckets", cfg["num_buckets"]),
        ("key generator", cfg["key_generator"]),
        ("hive-style partitions", cfg["hive_style"]),
        ("url-encoded partitions", cfg["url_encode"]),
        ("meta fields", cfg["populate_meta_fields"]),
        ("base file format", cfg["base_file_format"]),
        ("change data at commit time", cfg["change_data"] or "off (the change feed is inferred when read)"),
    ]
    for k, v in rows:
        props.add_row(k, cell(v))
    s = r["size"]
    props.add_row("size", f"{size(s['bytes'])} in {s['files']} data files "
                          f"(latest slices: {size(s['live_bytes'])} in {s['live_files']} files)")
    props.add_row("file groups", str(r["file_groups"]))
    parts = r["partitions"]
    preview = ", ".join(partition_label(p) for p in parts["first"])
    more = f", ... ({parts['count'] - len(parts['first'])} more)" if parts["count"] > len(parts["first"]) else ""
    props.add_row("partitions", f"{parts['count']}" + (f": {preview}{more}" if parts["count"] else ""))
    tl = r["timeline"]
    props.add_row("timeline", f"{tl['instants']} instants, {tl['commits']} completed commits, {tl['pending']} pending"
                  + (", older instants archived" if tl["archived_instants"] else ""))
    last = r["latest_commit"]
    props.add_row("latest commit", NONE if last is None else
                  f"{last['requested_time']} {last['action']}"
                  + (f" (completed {last['completion_time']})" if last["completion_time"] else ""))
    c.print(props)
    schema = Table(title="Schema", title_justify="left")
    schema.add_column("column", style="cyan")
    schema.add_column("type")
    schema.add_column("nullable")
    for f in r["schema"]:
        schema.add_row(cell(f["name"]), cell(f["type"]), cell(f["nullable"]))
    if not r["schema"]:
        schema.add_row(NONE, "[dim]no commits yet[/]", "")
    c.print(schema)


_STATE_STYLE = {"completed": "green", "inflight": "yellow", "requested": "yellow"}


def timeline(c: Console, r: dict[str, Any]) -> None:
    t = Table(title="Timeline" + ("" if r["all"] else " (commits; --all shows every action)"), title_justify="left")
    for name, justify in (("requested", "left"), ("completed", "left"), ("action", "left"), ("state", "left"),
                          ("operation", "left"), ("files", "right"), ("rows written", "right"),
                          ("deleted", "right"), ("bytes written", "right"), ("details", "left")):
        t.add_column(name, justify=justify)  # type: ignore[arg-type]
    for i in r["instants"]:
        style = _STATE_STYLE.get(i["state"], "")
        details = []
        if i.get("rolled_back"):
            details.append("rolled back " + ", ".join(i["rolled_back"]))
        if i.get("files_deleted") is not None and i["action"] in ("clean", "rollback"):
            details.append(f"{i['files_deleted']} files deleted")
        if i.get("replaced_file_groups"):
            details.append(f"replaced {i['replaced_file_groups']} file groups")
        if i.get("error"):
            details.append(f"[red]{escape(i['error'])}[/]")
        t.add_row(i["requested_time"], cell(i["completion_time"]), i["action"], f"[{style}]{i['state']}[/]",
                  cell(i.get("operation")), cell(i.get("files")), cell(i.get("rows_written")),
                  cell(i.get("rows_deleted")), size(i.get("bytes_written")) if "bytes_written" in i else NONE,
                  "; ".join(details))
    c.print(t)
    notes = []
    if r["hidden"]:
        notes.append(f"{r['hidden']} other instants (clean, rollback, ...) hidden; use --all")
    if r["archived_instants"]:
        notes.append("older instants are archived and not shown")
    for n in notes:
        c.print(f"[dim]{n}[/]")


def files(c: Console, r: dict[str, Any]) -> None:
    title = "File groups (latest slices)" + (f" in {r['partition']!r}" if r["partition"] is not None else "")
    t = Table(title=escape(title), title_justify="left")
    for name, justify in (("partition", "left"), ("file id", "left"), ("bucket", "right"), ("slices", "right"),
                          ("base file", "left"), ("base size", "right"), ("logs", "right"), ("log size", "right")):
        t.add_column(name, justify=justify, overflow="fold")  # type: ignore[arg-type]
    for g in r["file_groups"]:
        t.add_row(partition_label(g["partition"]), cell(g["file_id"]), cell(g["bucket"]), str(g["slices"]),
                  cell(g["base_file"]), size(g["base_bytes"]) if g["base_file"] else NONE, str(g["log_files"]),
                  size(g["log_bytes"]))
    c.print(t)
    s = r["summary"]
    c.print(f"{s['file_groups']} file groups, {s['base_files']} base files, {s['log_files']} log files, "
            f"{size(s['bytes'])}")


def show(c: Console, r: dict[str, Any]) -> None:
    t = Table(show_lines=False)
    for name in r["columns"]:
        t.add_column(escape(name), overflow="fold")
    for row in r["rows"]:
        t.add_row(*(cell(row[n]) for n in r["columns"]))
    c.print(t)
    shown = len(r["rows"])
    more = f" (showing {shown}; --limit N to change, 0 for all)" if r["truncated"] else ""
    c.print(f"{r['num_rows']} rows{more}")


_CHECK_STYLE = {"ok": "[green]ok[/]", "failed": "[bold red]FAILED[/]", "warning": "[yellow]warning[/]",
                "skipped": "[dim]skipped[/]"}


def validate(c: Console, r: dict[str, Any]) -> None:
    t = Table(title=f"Validation of {escape(r['path'])}", title_justify="left")
    t.add_column("check")
    t.add_column("result")
    t.add_column("detail")
    for ch in r["checks"]:
        t.add_row(ch["name"], _CHECK_STYLE[ch["status"]], cell(ch["detail"]))
    c.print(t)
    for e in r["errors"]:
        c.print(f"[red]error:[/] {escape(e)}", soft_wrap=True)
    for w in r["warnings"]:
        c.print(f"[yellow]warning:[/] {escape(w)}", soft_wrap=True)
    if r["ok"]:
        c.print("[bold green]table is valid[/]" + (f" ({len(r['warnings'])} warnings)" if r["warnings"] else ""))
    else:
        c.print(f"[bold red]{len(r['errors'])} problems found[/]")


def action(c: Console, r: dict[str, Any]) -> None:
    c.print(r["message"], soft_wrap=True)
    details = r.get("result")
    if isinstance(details, dict) and details:
        t = Table(show_header=False)
        t.add_column(style="cyan")
        t.add_column()
        for k, v in details.items():
            t.add_row(escape(str(k)), cell(v))
        c.print(t)
