"""Numbers as Java prints them: the text Apache Hudi stores when its writer promotes a number column to string
(HoodieAvroUtils calls toString), which Python's repr and Arrow's cast spell differently ("1.0E7", "1E-8")."""

from __future__ import annotations

import math
import struct
from decimal import Decimal

import pyarrow as pa


def java_text(arr: pa.Array) -> pa.Array:
    """Floats and decimals as Java's Double/Float/BigDecimal.toString print them (Hudi's text of a number)."""
    enc = arr.dictionary_encode()
    single = pa.types.is_float32(arr.type)
    texts = [java_number(v, single) for v in enc.dictionary.to_pylist()]
    return pa.DictionaryArray.from_arrays(enc.indices, pa.array(texts, pa.string())).dictionary_decode()


def java_number(value: float | Decimal, single: bool) -> str:
    """One number as Java's Double.toString (Float.toString when `single`) or BigDecimal.toString prints it."""
    if isinstance(value, Decimal):
        return str(value)  # the same scientific-notation rule as BigDecimal.toString
    if math.isnan(value):
        return "NaN"
    if math.isinf(value):
        return "Infinity" if value > 0 else "-Infinity"
    if value == 0:
        return "-0.0" if math.copysign(1, value) < 0 else "0.0"
    digits = _shortest(value, single)
    if 1e-3 <= abs(value) < 1e7:
        text = format(digits, "f")
        return text if "." in text else text + ".0"
    sign, numerals, exponent = digits.as_tuple()
    mantissa = "".join(map(str, numerals)).rstrip("0") or "0"
    power = len(numerals) + int(exponent) - 1
    return f"{'-' if sign else ''}{mantissa[0]}.{mantissa[1:] or '0'}E{power}"


def _shortest(value: float, single: bool) -> Decimal:
    """The fewest digits that read back as the value (a float32's own, not its double's)."""
    if not single:
        return Decimal(repr(value))
    for precision in range(1, 10):
        text = f"{value:.{precision}g}"
        if struct.unpack("f", struct.pack("f", float(text)))[0] == value:
            return Decimal(text)
    return Decimal(repr(value))
