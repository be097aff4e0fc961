"""java.util.Properties text codec: hoodie.properties and .hoodie_partition_metadata are written by Java."""

from __future__ import annotations

import re
from datetime import datetime, timezone

_ESCAPES = {"t": "\t", "n": "\n", "r": "\r", "f": "\f"}
# a backslash and what it escapes: u with four characters (hex digits, or int() refuses them), else one character;
# a lone backslash at the end stays as it is
_ESCAPE = re.compile(r"\\(u.{4}|.)", re.DOTALL)
# a key runs to its first unescaped separator (a backslash escapes the character after it, if any)
_KEY = re.compile(r"(?:\\.?|[^=: \t\f\\])*", re.DOTALL)


def _logical_lines(text: str) -> list[str]:
    lines: list[str] = []
    pending = ""
    for raw in text.splitlines():
        line = raw.lstrip(" \t\f")
        if not pending and (not line or line[0] in "#!"):
            continue
        trailing = len(line) - len(line.rstrip("\\"))
        if trailing % 2 == 1:  # odd number of backslashes: continuation
            pending += line[:-1]
            continue
        lines.append(pending + line)
        pending = ""
    if pending:
        lines.append(pending)
    return lines


def _unescape(s: str) -> str:
    if s.isascii() and "\\" not in s:  # most keys and values: nothing to undo (hoodie.properties is read per commit)
        return s
    # \uXXXX escapes of a surrogate pair arrive as two halves: join them
    return _ESCAPE.sub(_unescaped, s).encode("utf-16", "surrogatepass").decode("utf-16")


def _unescaped(m: re.Match[str]) -> str:
    escaped = m.group(1)
    if len(escaped) == 5:  # u and four hex digits
        return chr(int(escaped[1:], 16))
    return _ESCAPES.get(escaped, escaped)


def loads(text: str) -> dict[str, str]:
    """Parse Properties text (ISO-8859-1 or UTF-8 decoded) into an ordered dict."""
    props: dict[str, str] = {}
    for line in _logical_lines(text):
        i = _KEY.match(line).end()  # type: ignore[union-attr]  # matches every line, if only empty
        key = line[:i]
        rest = line[i:].lstrip(" \t\f")
        if rest[:1] in ("=", ":"):
            rest = rest[1:].lstrip(" \t\f")
        props[_unescape(key)] = _unescape(rest)
    return props


def _escape(s: str, is_key: bool) -> str:
    out: list[str] = []
    for i, c in enumerate(s):
        if c == " " and (is_key or i == 0):
            out.append("\\ ")
        elif c in "\\=:#!":
            out.append("\\" + c)
        elif c == "\t":
            out.append("\\t")
        elif c == "\n":
            out.append("\\n")
        elif c == "\r":
            out.append("\\r")
        elif c == "\f":
            out.append("\\f")
        elif ord(c) < 0x20 or ord(c) > 0x7E:
            data = c.encode("utf-16-be")
            for j in range(0, len(data), 2):
                out.append(f"\\u{int.from_bytes(data[j : j + 2], 'big'):04X}")
        else:
            out.append(c)
    return "".join(out)


def dumps(props: dict[str, str], comment: str | None = None) -> str:
    """Properties text as Java's Properties.store writes it (comment line, date line, key=value)."""
    now = datetime.now(timezone.utc)
    lines = []
    if comment:
        lines.append("#" + comment)
    lines.append("#" + now.strftime("%a %b %d %H:%M:%S UTC %Y"))
    for key, value in props.items():
        lines.append(f"{_escape(key, True)}={_escape(value, False)}")
    return "\n".join(lines) + "\n"


def decode_bytes(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError:
        return data.decode("latin-1")
