"""The `hudi-py` command: argument parsing, dispatch, output mode and exit codes.

Exit codes: 0 success, 1 a problem (a HudiDsError, a failed validation), 2 a usage error.
"""

from __future__ import annotations

import argparse
import contextlib
import dataclasses
import json
import os
import re
import sys
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from rich.console import Console
from rich.markup import escape

from hudi_ds import __version__
from hudi_ds.config.writable import check_timeline_writable
from hudi_ds.errors import HudiDsError, is_native_panic
from hudi_ds.files.compaction_plan import pending_compactions, read_plan
from hudi_ds.table import HudiTable
from hudi_ds.timeline import normalize_instant_time

from . import progress, render, report
from .validate import validate

PROG = "hudi-py"


class CliError(Exception):
    """A problem the command found itself (exit 1), with a message naming the fix."""


# ---- output -------------------------------------------------------------------------------------------------

def _console(stderr: bool = False) -> Console:
    stream = sys.stderr if stderr else sys.stdout
    terminal = stream.isatty()
    return Console(file=stream, width=None if terminal else 200, highlight=False)


def _emit(args: argparse.Namespace, data: dict[str, Any], draw: Callable[[Console, dict[str, Any]], None]) -> None:
    if args.json:
        sys.stdout.write(json.dumps(data, indent=2, ensure_ascii=False, default=str) + "\n")
    else:
        draw(_console(), data)


@contextlib.contextmanager
def _busy(args: argparse.Namespace, message: str) -> Iterator[None]:
    """A spinner on stderr while long work runs (only on a terminal, never in --json mode)."""
    err = _console(stderr=True)
    if args.json or not err.is_terminal:
        yield
        return
    with err.status(message, spinner="dots"):
        yield


def _progress(args: argparse.Namespace, description: str, total: int | None = None,
              advance_on: str | None = None) -> contextlib.AbstractContextManager[progress.Tracker]:
    """A progress bar on stderr while long work runs (only on a terminal, never in --json mode)."""
    err = _console(stderr=True)
    return progress.progress_bar(not args.json and err.is_terminal, err, description, total, advance_on)


def _watched(table: HudiTable, tracker: progress.Tracker) -> HudiTable:
    """`table`, its file operations counted on the progress bar."""
    table.storage = tracker.watch(table.storage)
    return table


def _fail(message: str, kind: str, as_json: bool) -> int:
    line = " ".join(message.split())
    _console(stderr=True).print(f"[bold red]error:[/] [red]{escape(line)}[/]", soft_wrap=True)
    if as_json:
        sys.stdout.write(json.dumps({"error": {"type": kind, "message": line}}) + "\n")
    return 1


# ---- argument types -----------------------------------------------------------------------------------------

_COMPARE = re.compile(r"^\s*(?P<col>[^\s=!<>]+)\s*(?P<op>==|!=|<=|>=|=|<|>)\s*(?P<val>.*?)\s*$")
_MEMBER = re.compile(r"^\s*(?P<col>\S+)\s+(?P<op>not\s+in|in)\s+(?P<val>.*?)\s*$", re.IGNORECASE)


def _unquote(v: str) -> str:
    v = v.strip()
    if len(v) >= 2 and v[0] == v[-1] and v[0] in "'\"":
        return v[1:-1]
    return v


def parse_where(text: str) -> tuple[str, str, Any]:
    """`city = sf`, `fare >= 10`, `id in a,b,c`, `id not in (a, b)` -> (column, op, value-as-string)."""
    m = _COMPARE.match(text)
    if m:
        value = _unquote(m["val"])
        if not m["val"]:
            raise argparse.ArgumentTypeError(f"{text!r} has no value after {m['op']!r}")
        return m["col"], m["op"], value
    m = _MEMBER.match(text)
    if m:
        raw = m["val"].strip()
        if raw[:1] in "([" and raw[-1:] in ")]":
            raw = raw[1:-1]
        values = [_unquote(v) for v in raw.split(",")]
        if not raw.strip() or any(v == "" for v in values):
            raise argparse.ArgumentTypeError(f"{text!r}: give a comma-separated list of values, e.g. `id in a,b,c`")
        return m["col"], " ".join(m["op"].lower().split()), values
    raise argparse.ArgumentTypeError(
        f"cannot read {text!r} as a filter; write `column op value` with op one of = != < <= > >= "
        "(e.g. `fare >= 10`), or `column in a,b,c` / `column not in a,b`")


def _instant(text: str) -> str:
    try:
        return normalize_instant_time(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def _columns(text: str) -> list[str]:
    cols = [c.strip() for c in text.split(",") if c.strip()]
    if not cols:
        raise argparse.ArgumentTypeError("give at least one column, e.g. --columns id,name")
    return cols


def _count(minimum: int) -> Callable[[str], int]:
    def parse(text: str) -> int:
        try:
            n = int(text)
        except ValueError:
            raise argparse.ArgumentTypeError(f"{text!r} is not an integer") from None
        if n < minimum:
            raise argparse.ArgumentTypeError(f"must be at least {minimum}, got {n}")
        return n

    return parse


# ---- commands -----------------------------------------------------------------------------------------------

def _option(text: str) -> tuple[str, str]:
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(f"{text!r} is not KEY=VALUE (for example clean.retain_commits=5)")
    return key.strip(), value.strip()


def _table(args: argparse.Namespace) -> HudiTable:
    """The table, opened with the command's --option settings (any key of docs/options.md)."""
    return HudiTable(args.path, options=dict(args.option or []))


def cmd_info(args: argparse.Namespace) -> int:
    with _progress(args, "listing files...") as tracker:
        data = report.info(_watched(_table(args), tracker))
    _emit(args, data, render.info)
    return 0


def cmd_timeline(args: argparse.Namespace) -> int:
    data = report.timeline(_table(args), args.all)
    _emit(args, data, render.timeline)
    return 1 if any("error" in i for i in data["instants"]) else 0


def cmd_files(args: argparse.Namespace) -> int:
    with _progress(args, "listing files...") as tracker:
        data = report.files(_watched(_table(args), tracker), args.partition)
    _emit(args, data, render.files)
    return 0


def cmd_show(args: argparse.Namespace) -> int:
    with _progress(args, "reading...") as tracker:
        data = report.show(_watched(_table(args), tracker), args.as_of, args.where, args.columns, args.limit,
                           args.read_optimized, args.meta)
    _emit(args, data, render.show)
    return 0


def cmd_validate(args: argparse.Namespace) -> int:
    with _progress(args, "validating...", total=0) as tracker:
        data = validate(_watched(_table(args), tracker), on_check=tracker.at)
    _emit(args, data, render.validate)
    return 0 if data["ok"] else 1


def cmd_metadata(args: argparse.Namespace) -> int:
    """`metadata PATH` shows the metadata table; `metadata drop PATH` drops it."""
    if args.target is not None:
        if args.path != "drop":
            sys.stderr.write(f"{PROG} metadata: error: `{PROG} metadata PATH` shows the metadata table, "
                             f"`{PROG} metadata drop PATH` drops it; got {args.path!r} before the path\n")
            return 2
        args.path = args.target
        with _busy(args, f"dropping the metadata table of {args.path}..."):
            data = report.drop_metadata(_table(args))
        _emit(args, data, render.action)
        return 0
    _emit(args, report.metadata(_table(args)), render.action)
    return 0


def _plain(value: Any) -> Any:
    """A service's result as JSON-ready data (dataclasses, pydantic models, strings, lists...)."""
    if dataclasses.is_dataclass(value) and not isinstance(value, type):
        value = dataclasses.asdict(value)
    elif hasattr(value, "model_dump"):
        value = value.model_dump()
    if isinstance(value, (dict, list, tuple, str, int, float, bool)) or value is None:
        return report.jsonable(value)
    return str(value)


def _writable(args: argparse.Namespace) -> HudiTable:
    """The table, if hudi_ds may change it (docs/compatibility.md)."""
    table = _table(args)
    check_timeline_writable(table.config)
    return table


def _service(args: argparse.Namespace, method: str, verb: str, kwargs: dict[str, Any],
             work: Callable[[HudiTable], contextlib.AbstractContextManager[progress.Tracker]] | None = None) -> int:
    """Run a table service; `work` opens the progress bar of the table's service (else a spinner shows)."""
    table = _writable(args)
    fn = getattr(table, method, None)
    if fn is None:
        raise CliError(f"this hudi_ds has no HudiTable.{method}(); upgrade hudi_ds to a version with table services")
    busy = work(table) if work is not None else _busy(args, f"{verb} {table.path}...")
    with busy as tracker:
        if tracker is not None:
            _watched(table, tracker)
        result = _plain(fn(**kwargs))
    if result is None or result == [] or result == {}:
        message = f"{args.command}: nothing to do"
    elif isinstance(result, str):
        message = f"{args.command}: done (instant {result})"
    else:
        message = f"{args.command}: done"
    _emit(args, {"command": args.command, "path": table.path, "result": result, "message": message}, render.action)
    return 0


def cmd_rollback(args: argparse.Namespace) -> int:
    table = _writable(args)
    with _busy(args, f"rolling back {args.instant}..."):
        rollback_instant = table.rollback(args.instant, force=args.force)
    message = f"rolled back {args.instant}" + (f" (rollback instant {rollback_instant})" if rollback_instant else "")
    _emit(args, {"command": "rollback", "path": table.path, "instant": args.instant,
                 "result": {"rolled_back": args.instant, "rollback_instant": rollback_instant},
                 "message": message}, render.action)
    return 0


def cmd_compact(args: argparse.Namespace) -> int:
    def planned(table: HudiTable) -> contextlib.AbstractContextManager[progress.Tracker]:
        """The bar counts the new base files against the file groups of the plans (scheduled first)."""
        table.schedule_compaction()
        timeline = table.load_timeline()
        groups = sum(len(read_plan(timeline, inst)) for inst in pending_compactions(timeline))
        return _progress(args, "compacting", total=groups, advance_on=progress.WRITTEN)

    return _service(args, "compact", "compacting", {}, planned)


def cmd_clean(args: argparse.Namespace) -> int:
    kwargs = {} if args.retain_commits is None else {"retain_commits": args.retain_commits}
    return _service(args, "clean", "cleaning", kwargs,
                    lambda _: _progress(args, "cleaning", advance_on=progress.DELETED))


def cmd_archive(args: argparse.Namespace) -> int:
    return _service(args, "archive", "archiving", {})


def cmd_version(args: argparse.Namespace) -> int:
    table = _table(args)
    before = table.config.version
    verb = "upgrading" if args.command == "upgrade" else "downgrading"
    with _busy(args, f"{verb} {table.path} to version {args.to}..."):
        after = getattr(table, args.command)(args.to)
    message = (f"{args.command}d from version {before} to {after}" if after != before
               else f"{args.command}: the table is version {after} already")
    _emit(args, {"command": args.command, "path": table.path, "result": {"from": before, "to": after},
                 "message": message}, render.action)
    return 0


# ---- parser -------------------------------------------------------------------------------------------------

def build_parser() -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", default=argparse.SUPPRESS,
                        help="print machine-readable JSON instead of tables")
    common.add_argument("-o", "--option", type=_option, action="append", metavar="KEY=VALUE",
                        help="a table option (docs/options.md), repeatable; e.g. -o clean.retain_commits=5")
    parser = argparse.ArgumentParser(
        prog=PROG, allow_abbrev=False,
        description="Inspect and maintain Apache Hudi tables (hudi_ds).",
        epilog="Exit codes: 0 success, 1 a problem with the table or a failed check, 2 a usage error.")
    parser.add_argument("--version", action="version", version=f"{PROG} (hudi_ds) {__version__}")
    parser.add_argument("--json", action="store_true", default=False,
                        help="print machine-readable JSON instead of tables")
    sub = parser.add_subparsers(dest="command", metavar="COMMAND")

    def add(name: str, handler: Callable[[argparse.Namespace], int], help_: str) -> argparse.ArgumentParser:
        p = sub.add_parser(name, parents=[common], help=help_, description=help_, allow_abbrev=False)
        p.add_argument("path", metavar="PATH", help="table base path (local path or URI)")
        p.set_defaults(handler=handler)
        return p

    add("info", cmd_info, "table configuration, schema, size, partitions and latest commit")
    p = add("timeline", cmd_timeline, "instants with rows and bytes written by each commit")
    p.add_argument("--all", action="store_true", help="also show clean, rollback and other non-commit actions")
    p = add("files", cmd_files, "file groups and their latest file slices")
    p.add_argument("--partition", metavar="P", help="only this partition path (e.g. sf or city=sf)")
    p = add("show", cmd_show, "read rows (snapshot, time travel or read-optimized)")
    p.add_argument("--as-of", type=_instant, metavar="T", help="time travel: the table as of instant T")
    p.add_argument("--where", type=parse_where, action="append", default=[], metavar='"COL OP VALUE"',
                   help="filter, repeatable: `city = sf`, `fare >= 10`, `id in a,b,c`")
    p.add_argument("--columns", type=_columns, metavar="A,B", help="columns to show")
    p.add_argument("--limit", type=_count(0), default=20, metavar="N", help="rows to show (default 20, 0 = all)")
    p.add_argument("--read-optimized", action="store_true", help="base files only (skip log files)")
    p.add_argument("--meta", action="store_true", help="also show the _hoodie_* meta columns")
    p = add("rollback", cmd_rollback, "roll back a pending instant or the latest completed commit")
    p.add_argument("instant", type=_instant, metavar="INSTANT", help="instant time to roll back")
    p.add_argument("--force", action="store_true",
                   help="roll back a pending instant even though its writer's heartbeat is fresh")
    add("compact", cmd_compact, "compact merge-on-read file slices (log files into new base files)")
    p = add("clean", cmd_clean, "delete file slices older than the retained commits")
    p.add_argument("--retain-commits", type=_count(1), metavar="N", help="number of commits whose files to keep")
    add("archive", cmd_archive, "move old instants from the active timeline to the archive")
    p = add("upgrade", cmd_version, "upgrade the table to version 8 or 9 as Apache Hudi 1.x does")
    p.add_argument("--to", type=int, choices=[8, 9], required=True, metavar="{8,9}", help="the table version to reach")
    p = add("downgrade", cmd_version, "downgrade the table to version 8 or 6 (refused, naming why, where the table "
                                      "holds what only the newer version has)")
    p.add_argument("--to", type=int, choices=[6, 8], required=True, metavar="{6,8}", help="the table version to reach")
    add("validate", cmd_validate, "check the table's invariants; exit 1 listing the problems")
    p = add("metadata", cmd_metadata, "the metadata table: its partitions, what its files partition lists, the "
                                      "instant it is synced to; `metadata drop PATH` drops it (as a write with "
                                      "hoodie.metadata.enable=false does; the next write to a version 8/9 table "
                                      "builds it again unless that option is false)")
    p.add_argument("target", nargs="?", metavar="PATH", help="with `drop` before it: the table to drop it from")
    return parser


def _exit_code(code: Any) -> int:
    if code is None:
        return 0
    return code if isinstance(code, int) else 1


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    try:
        args = parser.parse_args(argv)
    except SystemExit as exc:  # argparse: --help / --version (0) or a usage error (2)
        return _exit_code(exc.code)
    if args.command is None:
        parser.print_usage(sys.stderr)
        sys.stderr.write(f"{PROG}: error: a command is required (see {PROG} --help)\n")
        return 2
    try:
        return int(args.handler(args))
    except HudiDsError as exc:
        return _fail(str(exc), type(exc).__name__, args.json)
    except CliError as exc:
        return _fail(str(exc), "CliError", args.json)
    except BrokenPipeError:  # e.g. `hudi-py show ... | head`
        with contextlib.suppress(OSError, ValueError):
            os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 1
    except OSError as exc:
        return _fail(f"{exc}; check the path and its permissions", type(exc).__name__, args.json)
    except KeyboardInterrupt:
        return 130
    except BaseException as exc:  # a Rust library's panic is no Exception: one line, not a Rust backtrace
        if not is_native_panic(exc):
            raise
        first = str(exc).splitlines()[0] if str(exc) else "panic"
        return _fail(f"a native library crashed ({first}); check the storage options and the path", "PanicException",
                     args.json)
