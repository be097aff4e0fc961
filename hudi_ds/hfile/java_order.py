"""The iteration order of a `java.util.HashMap` with string keys.

Hudi's HFile writer keeps the file info entries and the meta blocks in HashMaps and writes them in their
iteration order; writing ours in the same order makes our files byte-identical to Hudi's.
"""

from __future__ import annotations

from collections.abc import Iterable

_LOAD_FACTOR = 0.75


def java_string_hash(text: str) -> int:
    """`String.hashCode()`: 31-polynomial over UTF-16 code units, as a signed 32-bit int."""
    h = 0
    data = text.encode("utf-16-be")
    for i in range(0, len(data), 2):
        h = (31 * h + (data[i] << 8 | data[i + 1])) & 0xFFFFFFFF
    return h - (1 << 32) if h >= 1 << 31 else h


def hash_map_order(keys: Iterable[str]) -> list[str]:
    """`keys` (distinct, in insertion order) in the order a default HashMap (capacity 16, load factor 0.75)
    iterates them: by bucket, then by insertion within a bucket (resizes keep that relative order)."""
    ordered = list(keys)
    capacity = 16
    while len(ordered) > capacity * _LOAD_FACTOR:
        capacity *= 2

    def bucket(key: str) -> int:
        h = java_string_hash(key) & 0xFFFFFFFF
        return (h ^ (h >> 16)) & (capacity - 1)

    position = {key: i for i, key in enumerate(ordered)}
    return sorted(ordered, key=lambda k: (bucket(k), position[k]))
