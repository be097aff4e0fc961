"""A record index write's entries built column-wise: per file group, its keys and the Avro bytes of their records.

A write changes the locations of many keys but names few distinct locations (a partition, a file group and an
instant each), and a record index record's bytes depend on its location alone (its key is blanked in the value: the
HFile key holds it). So each distinct location is encoded once, as the one-record path encodes it, and the values
column takes its entries from those; keys are split by file group with numpy. A million keys then cost a few
column operations instead of a million Python records.
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.hfile.avro_records import encode_values
from hudi_ds.metadata import record_index_codec as codec
from hudi_ds.metadata.avro_schema import metadata_schema_json
from hudi_ds.metadata.record_index import file_groups_of, location_record

Place = tuple[str, str] | tuple[str, str, int]  # data partition, file id[, epoch ms of the instant placing the key]


def group_entries(keys: Sequence[str], places: Sequence[Place], count: int, table_version: int,
                  instant_ms: int = 0) -> dict[int, tuple[pa.Array, pa.Array]]:
    """File group index -> (keys, values) of the ones of `keys` (distinct) it holds, `places[i]` the location of
    `keys[i]` (at `instant_ms` when it names no instant of its own); values are the HFile values (binary) of the
    keys' record index records."""
    distinct, codes = _factorized(places)
    return group_coded_entries(pa.array(keys, pa.string()), codes, distinct, count, table_version, instant_ms)


def group_coded_entries(keys: pa.Array, codes: np.ndarray, places: Sequence[Place], count: int,
                        table_version: int, instant_ms: int = 0) -> dict[int, tuple[pa.Array, pa.Array]]:
    """`group_entries` of keys given as a string column, each key's place as its index (`codes`) in the
    distinct `places`; a key given more than once is placed where its last copy says (a key an instant placed
    twice, such as a move between partitions)."""
    records = {}
    for i, place in enumerate(places):
        partition, file_id, *at = place
        records[str(i)] = location_record("", partition, file_id, at[0] if at else instant_ms)
    _, encoded = encode_values(records, metadata_schema_json(table_version), codec.encode)
    raw = keys.cast(pa.binary())
    by_key = pc.sort_indices(raw).to_numpy()  # so each group's keys come sorted; stable: copies in given order
    if len(by_key) > 1:
        in_order = raw.take(by_key)
        later_copy = pc.equal(in_order[:-1], in_order[1:]).to_numpy(zero_copy_only=False)
        if later_copy.any():
            by_key = by_key[np.append(~later_copy, True)]
    groups = np.asarray(file_groups_of(keys, count), dtype=np.int64)[by_key]
    order = by_key[np.argsort(groups, kind="stable")]
    bounds = np.searchsorted(np.sort(groups), np.arange(count + 1))
    key_column = keys.take(order)
    values = encoded.take(codes[order])
    return {index: (key_column[start:stop], values[start:stop])
            for index, (start, stop) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
            if stop > start}


def _factorized(places: Sequence[Place]) -> tuple[list[Place], np.ndarray]:
    """The distinct places and the code of each of `places` in them. A write gives all keys of a file group the
    same tuple, so the objects are told apart by identity first (no hashing per key), then the few distinct
    objects by value."""
    identities = np.fromiter(map(id, places), dtype=np.uint64, count=len(places))
    _, first, inverse = np.unique(identities, return_index=True, return_inverse=True)
    distinct: dict[Place, int] = {}
    object_codes = np.array([distinct.setdefault(places[i], len(distinct)) for i in first.tolist()],
                            dtype=np.int64)
    return list(distinct), object_codes[inverse.ravel()]
