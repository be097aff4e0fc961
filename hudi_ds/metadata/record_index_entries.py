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

from hudi_ds.hfile.avro_records import encode_values
from hudi_ds.metadata import record_index_codec as codec
from hudi_ds.metadata.avro_schema import metadata_schema_json
from hudi_ds.metadata.record_index import file_groups_of, location_record

Location = tuple[str, str, int]  # data partition, file id, epoch ms of the instant that placed the key


def group_entries(keys: Sequence[str], locations: Sequence[Location], count: int,
                  table_version: int) -> dict[int, tuple[pa.Array, pa.Array]]:
    """File group index -> (keys, values) of the ones of `keys` (distinct) it holds, `locations[i]` the location of
    `keys[i]`; values are the HFile values (binary) of the keys' record index records."""
    distinct: dict[Location, int] = {}
    codes = np.fromiter((distinct.setdefault(loc, len(distinct)) for loc in locations), dtype=np.int64,
                        count=len(locations))
    _, encoded = encode_values({str(i): location_record("", *loc) for i, loc in enumerate(distinct)},
                               metadata_schema_json(table_version), codec.encode)
    groups = np.asarray(file_groups_of(keys, count), dtype=np.int64)
    order = np.argsort(groups, kind="stable")
    bounds = np.searchsorted(groups[order], np.arange(count + 1))
    key_column = pa.array(keys, pa.string()).take(order)
    values = encoded.take(codes[order])
    return {index: (key_column[start:stop], values[start:stop])
            for index, (start, stop) in enumerate(zip(bounds[:-1].tolist(), bounds[1:].tolist(), strict=True))
            if stop > start}
