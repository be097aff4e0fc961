"""Joining Arrow columns without copying them or walking their values in Python."""

from __future__ import annotations

from collections.abc import Sequence

import pyarrow as pa


def joined(parts: Sequence[pa.Array | pa.ChunkedArray], typ: pa.DataType) -> pa.ChunkedArray:
    """The parts one after another as one column of `typ`, their chunks reused (`pa.chunked_array` given a
    ChunkedArray part converts its values one by one in Python)."""
    chunks: list[pa.Array] = []
    for part in parts:
        part = part if part.type == typ else part.cast(typ)
        chunks.extend(part.chunks if isinstance(part, pa.ChunkedArray) else [part])
    return pa.chunked_array(chunks, typ)
