"""Partition paths of Apache Hudi's timestamp-based key generator (TimestampBasedKeyGenerator, and the TIMESTAMP
fields of CustomKeyGenerator), from the table's `hoodie.keygen.timebased.*` settings.

Hudi (TimestampBasedAvroKeyGenerator) turns the partition value into an instant: a number of seconds
(UNIX_TIMESTAMP), milliseconds (EPOCHMILLISECONDS), microseconds (EPOCHMICROSECONDS) or of
`hoodie.keygen.timebased.timestamp.scalar.time.unit` (SCALAR), or a string parsed with one of the Joda patterns of
`hoodie.keygen.timebased.input.dateformat` (DATE_STRING); then formats it with the Joda pattern
`hoodie.keygen.timebased.output.dateformat` in the output time zone (`hoodie.keygen.timebased.timezone`, else
`...output.timezone`; for a DATE_STRING without one, the zone the string carried). A null value is the instant 1
(DATE_STRING: 1 ms after the epoch printed with the first input pattern, then parsed as any value). Java falls back to the writing JVM's default time zone where no zone is
set and the value carries none: hudi_ds takes UTC there (what Spark clusters usually run in); set the time zone
to be exact. Pattern letters other than the numeric fields below (and `Z`, an offset, in input patterns) are
refused by name, as are the MIXED type and unknown time zones.
"""

from __future__ import annotations

import datetime as dt
import re
from collections.abc import Mapping
from dataclasses import dataclass
from zoneinfo import ZoneInfo, ZoneInfoNotFoundError

import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import ConfigError, InvalidDataError

PREFIX = "hoodie.keygen.timebased."
TYPE = PREFIX + "timestamp.type"
INPUT_FORMAT = PREFIX + "input.dateformat"
INPUT_DELIMITER = PREFIX + "input.dateformat.list.delimiter.regex"
OUTPUT_FORMAT = PREFIX + "output.dateformat"
TIMEZONE = PREFIX + "timezone"
INPUT_TIMEZONE = PREFIX + "input.timezone"
OUTPUT_TIMEZONE = PREFIX + "output.timezone"
SCALAR_UNIT = PREFIX + "timestamp.scalar.time.unit"

# (milliseconds per unit, units per millisecond) of each numeric type (Java TimeUnit names for SCALAR)
_UNIT_MS = {"NANOSECONDS": (1, 1_000_000), "MICROSECONDS": (1, 1000), "MILLISECONDS": (1, 1), "SECONDS": (1000, 1),
            "MINUTES": (60_000, 1), "HOURS": (3_600_000, 1), "DAYS": (86_400_000, 1)}
_TYPE_UNIT = {"UNIX_TIMESTAMP": "SECONDS", "EPOCHMILLISECONDS": "MILLISECONDS", "EPOCHMICROSECONDS": "MICROSECONDS"}
_NUMERIC_LETTERS = "yMdHmsS"
_EPOCH = dt.datetime(1970, 1, 1, tzinfo=dt.timezone.utc)


def _tokens(pattern: str, setting: str, offsets: bool) -> list[tuple[str, int] | str]:
    """A Joda pattern as (letter, count) fields and literal strings; letters hudi_ds does not format are refused."""
    out: list[tuple[str, int] | str] = []
    i, n = 0, len(pattern)
    while i < n:
        c = pattern[i]
        if c == "'":
            end = i + 1
            text = []
            while end < n:
                if pattern[end] == "'":
                    if end + 1 < n and pattern[end + 1] == "'":
                        text.append("'")
                        end += 2
                        continue
                    break
                text.append(pattern[end])
                end += 1
            out.append("".join(text) if end > i + 1 else "'")
            i = end + 1
        elif c.isascii() and c.isalpha():
            j = i
            while j < n and pattern[j] == c:
                j += 1
            count = j - i
            # a two-digit year parses against Joda's pivot (the current century, moving): refused in inputs
            allowed = c in _NUMERIC_LETTERS and not (c == "M" and count > 2) and not (offsets and c == "y"
                                                                                      and count == 2)
            if not allowed and not (offsets and c == "Z" and count <= 2):
                raise ConfigError(
                    f"{setting}={pattern!r} uses the pattern letter {c * count!r}, which hudi_ds does not format; "
                    f"it formats y, M, MM, d, H, m, s and S{' and the offset Z' if offsets else ''} fields with "
                    "literal text: use those, or write the table with Apache Hudi")
            out.append((c, count))
            i = j
        else:
            out.append(c)
            i += 1
    return out


def _zone(name: str | None, setting: str) -> dt.tzinfo | None:
    """java.util.TimeZone.getTimeZone of a configured zone (None when unset); unknown ids are refused (Java would
    silently take GMT)."""
    if name is None or not name.strip():
        return None
    text = name.strip()
    if text.upper() in ("UTC", "GMT", "Z", "UT"):
        return dt.timezone.utc
    m = re.fullmatch(r"(?:GMT|UTC)([+-])(\d{1,2})(?::?(\d{2}))?", text, re.IGNORECASE)
    if m:
        minutes = int(m[2]) * 60 + int(m[3] or 0)
        return dt.timezone(dt.timedelta(minutes=minutes if m[1] == "+" else -minutes))
    try:
        return ZoneInfo(text)
    except (ZoneInfoNotFoundError, ValueError) as exc:
        raise ConfigError(f"{setting}={name!r} is no time zone hudi_ds knows; use a region id such as "
                          "'Asia/Shanghai', 'UTC' or 'GMT+08:00'") from exc


def _format(moment: dt.datetime, tokens: list[tuple[str, int] | str]) -> str:
    parts = []
    for tok in tokens:
        if isinstance(tok, str):
            parts.append(tok)
            continue
        letter, count = tok
        if letter == "y":
            parts.append(f"{moment.year % 100:02d}" if count == 2 else f"{moment.year:0{count}d}")
        elif letter == "S":
            parts.append(f"{moment.microsecond // 1000:03d}"[:count].ljust(count, "0"))
        elif letter == "Z":  # Joda: +HHmm, ZZ +HH:mm
            minutes = int((moment.utcoffset() or dt.timedelta()).total_seconds()) // 60
            sign, minutes = ("-" if minutes < 0 else "+"), abs(minutes)
            parts.append(f"{sign}{minutes // 60:02d}{':' if count == 2 else ''}{minutes % 60:02d}")
        else:
            value = {"M": moment.month, "d": moment.day, "H": moment.hour, "m": moment.minute, "s": moment.second}
            parts.append(f"{value[letter]:0{count}d}")
    return "".join(parts)


def _parser(tokens: list[tuple[str, int] | str]) -> re.Pattern[str]:
    """A regex of a Joda input pattern: a numeric field followed by another takes exactly its letters' width (as
    Joda parses 'yyyyMMdd'), else a year takes 4 to 9 digits, other fields one or two."""
    regex = []
    for i, tok in enumerate(tokens):
        if isinstance(tok, str):
            regex.append(re.escape(tok))
            continue
        letter, count = tok
        fixed = i + 1 < len(tokens) and not isinstance(tokens[i + 1], str) and tokens[i + 1][0] != "Z"
        if letter == "Z":
            regex.append(r"(?P<Z>Z|[+-]\d{2}:?\d{2})")
        elif fixed:
            regex.append(rf"(?P<{letter}>\d{{{count}}})")
        elif letter == "S":
            regex.append(rf"(?P<S>\d{{1,{max(count, 3)}}})")
        elif letter == "y":
            regex.append(rf"(?P<y>\d{{{min(count, 4)},9}})")
        else:
            regex.append(rf"(?P<{letter}>\d{{1,2}})" if count <= 2 else rf"(?P<{letter}>\d{{{count}}})")
    return re.compile("".join(regex))


@dataclass(frozen=True)
class TimestampPartition:
    """How one partition field's values become paths (see the module doc)."""

    kind: str
    unit_ms: tuple[int, int]  # (milliseconds per numeric unit, units per millisecond); (0, 1) for DATE_STRING
    input_patterns: tuple[re.Pattern[str], ...]
    output: tuple[tuple[str, int] | str, ...]
    input_zone: dt.tzinfo | None
    output_zone: dt.tzinfo | None
    null_text: str = ""  # DATE_STRING: the string Hudi parses in place of a null (getDefaultPartitionVal)

    @classmethod
    def of(cls, settings: Mapping[str, str]) -> TimestampPartition:
        kind = (settings.get(TYPE) or "").strip().upper()
        if kind not in ("UNIX_TIMESTAMP", "EPOCHMILLISECONDS", "EPOCHMICROSECONDS", "SCALAR", "DATE_STRING"):
            raise ConfigError(
                f"{TYPE}={settings.get(TYPE)!r}: hudi_ds writes UNIX_TIMESTAMP, EPOCHMILLISECONDS, EPOCHMICROSECONDS, "
                "SCALAR and DATE_STRING partition values (not MIXED); set it in the table's hoodie.properties as "
                "the table's writers had it")
        output = settings.get(OUTPUT_FORMAT)
        if not output:
            raise ConfigError(f"{OUTPUT_FORMAT} is not set: the table's timestamp-based partitions need the output "
                              "pattern its writers used; add it to hoodie.properties")
        unit_ms = (0, 1)
        inputs: list[list[tuple[str, int] | str]] = []
        if kind == "DATE_STRING":
            given = settings.get(INPUT_FORMAT)
            if not given:
                raise ConfigError(f"{TYPE}=DATE_STRING needs {INPUT_FORMAT}, the pattern(s) of the input strings")
            delimiter = settings.get(INPUT_DELIMITER) or ","
            inputs = [_tokens(p.strip(), INPUT_FORMAT, True) for p in re.split(delimiter, given)]
        else:
            unit = _TYPE_UNIT.get(kind) or (settings.get(SCALAR_UNIT) or "SECONDS").strip().upper()
            if unit not in _UNIT_MS:
                raise ConfigError(f"{SCALAR_UNIT}={unit!r} is no java.util.concurrent.TimeUnit name ("
                                  f"{', '.join(_UNIT_MS)})")
            unit_ms = _UNIT_MS[unit]
        if TIMEZONE in settings:  # HoodieDateTimeParser: present, it rules both; empty means no zone
            input_zone = output_zone = _zone(settings[TIMEZONE], TIMEZONE)
        else:
            input_zone = _zone(settings.get(INPUT_TIMEZONE), INPUT_TIMEZONE)
            output_zone = _zone(settings.get(OUTPUT_TIMEZONE), OUTPUT_TIMEZONE)
        # a null DATE_STRING is the instant 1 ms formatted with the first input pattern in the input zone, else the
        # output zone, else GMT, then parsed like any value: a pattern coarser than a millisecond moves it
        null_moment = (_EPOCH + dt.timedelta(milliseconds=1)).astimezone(input_zone or output_zone or dt.timezone.utc)
        null_text = _format(null_moment, inputs[0]) if inputs else ""
        return cls(kind, unit_ms, tuple(_parser(t) for t in inputs), tuple(_tokens(output, OUTPUT_FORMAT, False)),
                   input_zone, output_zone, null_text)

    def values(self, column: pa.Array | pa.ChunkedArray, field: str) -> pa.Array:
        """The formatted partition value of every row (before hive style and url-encoding), built once per
        distinct value."""
        arr = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
        if pa.types.is_dictionary(arr.type):
            arr = arr.dictionary_decode()
        enc = pc.dictionary_encode(self._inputs(arr, field))
        texts = [self._one(v, field) for v in enc.dictionary.to_pylist()]
        null_text = self._one(None, field)
        codes = pc.fill_null(enc.indices, len(texts))
        return pc.take(pa.array([*texts, null_text], pa.string()), codes)

    def _inputs(self, arr: pa.Array, field: str) -> pa.Array:
        t = arr.type
        if self.kind == "DATE_STRING":
            if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
                return pc.cast(arr, pa.string())
            raise InvalidDataError(f"partition column {field!r} has type {t}; {TYPE}=DATE_STRING partitions "
                                   "parse strings: give the column as strings")
        if pa.types.is_integer(t):
            return pc.cast(arr, pa.int64())
        if pa.types.is_decimal(t):  # BigDecimal.longValue(): towards zero, the low 64 bits of what does not fit
            return pc.cast(arr, pa.int64(), safe=False)
        if pa.types.is_floating(t):  # Java's longValue(): towards zero
            return pc.cast(pc.trunc(arr), pa.int64())
        if pa.types.is_date32(t):  # Avro's date is its epoch day, which Hudi converts with the type's unit
            return pc.cast(arr, pa.int32()).cast(pa.int64())
        if pa.types.is_string(t) or pa.types.is_large_string(t) or pa.types.is_string_view(t):
            # TimestampBasedAvroKeyGenerator parses text only with an input format (DATE_STRING, MIXED)
            raise InvalidDataError(
                f"partition column {field!r} holds text; {TYPE}={self.kind} partitions take integer values, as "
                "Apache Hudi's key generator does: give the instant as an integer column (cast it to int64; a "
                "table that stores the column as text, as Hudi's SQL UPDATE leaves it, stores the integers as text)")
        raise InvalidDataError(
            f"partition column {field!r} has type {t}; {TYPE}={self.kind} partitions take integer values (Spark's "
            "timestamps reach Hudi's key generator in a unit that depends on the write path): give the "
            "instant as an integer column")

    def _one(self, value: object, field: str) -> str:
        try:
            if self.kind == "DATE_STRING":
                return self._from_string(self.null_text if value is None else str(value), field)
            count = 1 if value is None else int(str(value))
            per_unit, per_ms = self.unit_ms
            ms = count * per_unit if per_ms == 1 else (1 if count >= 0 else -1) * (abs(count) // per_ms)  # to 0
            return _format((_EPOCH + dt.timedelta(milliseconds=ms)).astimezone(self.output_zone or dt.timezone.utc),
                           list(self.output))
        except OverflowError as exc:  # Joda formats years beyond 1-9999, Python's datetime does not
            raise InvalidDataError(f"partition column {field!r} has the value {value!r}, an instant outside the years "
                                   "1 to 9999, which hudi_ds cannot format as Apache Hudi would; fix or drop those "
                                   "rows") from exc

    def _from_string(self, text: str, field: str) -> str:
        for pattern in self.input_patterns:
            m = pattern.fullmatch(text)
            if m is None:
                continue
            g = m.groupdict()
            offset = g.get("Z")
            if offset is not None:
                zone: dt.tzinfo = dt.timezone.utc if offset == "Z" else dt.timezone(
                    (-1 if offset[0] == "-" else 1) * dt.timedelta(hours=int(offset[1:3]), minutes=int(offset[-2:])))
            else:
                zone = self.input_zone or dt.timezone.utc
            fraction = g.get("S") or "0"
            try:
                moment = dt.datetime(int(g.get("y") or 1970), int(g.get("M") or 1), int(g.get("d") or 1),
                                     int(g.get("H") or 0), int(g.get("m") or 0), int(g.get("s") or 0),
                                     int(fraction.ljust(3, "0")[:3]) * 1000, tzinfo=zone)
            except ValueError as exc:
                raise InvalidDataError(f"partition column {field!r} has the value {text!r}, no valid date: {exc}; "
                                       "fix or drop those rows") from exc
            # Java: the output zone, else the zone the parser gave the value (the input zone, else the offset)
            out_zone = self.output_zone or self.input_zone or zone
            return _format(moment.astimezone(out_zone), list(self.output))
        raise InvalidDataError(f"partition column {field!r} has the value {text!r}, which matches none of the "
                               f"patterns of {INPUT_FORMAT}; fix or drop those rows, or add its pattern")
