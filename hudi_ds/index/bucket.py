"""Hudi's SIMPLE bucket index: which bucket a record key belongs to, and bucket file ids.

Java (BucketIdentifier): ``bucket = (List.hashCode(hashKeys) & Integer.MAX_VALUE) % numBuckets`` where
``hashKeys = KeyGenUtils.extractRecordKeysByFields(recordKey, hashFields)``. We follow the 1.x parser
(HUDI-8403, Hudi >= 1.0):

* a key without ``,`` or without ``:`` is one value (so a single-field ``id:1`` key hashes ``"id:1"``);
* otherwise ``f1:v1,f2:v2`` is split into pairs (a value may contain ``:`` and ``,``: a value ends at the last
  ``,`` before the next ``:``), kept in RECORD-KEY order, filtered to the hash fields (no hash fields = all),
  ``__null__`` -> null and ``__empty__`` -> ""; if nothing is kept the whole key is the one value.

0.14/0.15 differ only for unusual keys: they split on every ``,`` and on the first ``:`` of each piece, keeping
pieces without ``:`` (a value containing ``,`` hashes as several values; a simple key containing ``:``, e.g. a
timestamp, is filtered away and hashes as the empty list), and older releases looked values up in hash-field
order. For keys whose values contain neither ``,`` nor ``:`` (and hash fields given in record-key order) every
release agrees.

Vectorized hashing: String.hashCode(s) = sum(c_i * 31^(n-1-i)) mod 2^32 over UTF-16 code units. Rows are hashed
straight from the Arrow buffers; all-ASCII data uses the bytes as code units, otherwise the buffer is transcoded
to UTF-16 once.
"""

from __future__ import annotations

import re
import uuid
from collections.abc import Iterable, Sequence

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from hudi_ds.errors import ConfigError, CorruptTableError, InvalidDataError
from hudi_ds.keys.keygen import EMPTY_PLACEHOLDER, NULL_PLACEHOLDER, java_string_forms, record_key_strings

_MASK32 = 0xFFFFFFFF
_M64 = 1 << 64
_INV31 = pow(31, -1, _M64)
_BLOCK = 1 << 16
_U64 = np.uint64

# -- scalar reference ------------------------------------------------------------------------------------


def _to_int32(h: int) -> int:
    h &= _MASK32
    return h - (1 << 32) if h & 0x80000000 else h


def java_string_hash(s: str) -> int:
    """java.lang.String.hashCode (UTF-16 code units, int32 wraparound), signed."""
    units = np.frombuffer(s.encode("utf-16-le", "surrogatepass"), dtype="<u2")
    h = 0
    for u in units.tolist():
        h = (31 * h + u) & _MASK32
    return _to_int32(h)


def java_list_hash(values: Sequence[str | None]) -> int:
    """java.util.List.hashCode of a list of strings (null hashes as 0), signed."""
    h = 1
    for v in values:
        h = (31 * h + (0 if v is None else java_string_hash(v))) & _MASK32
    return _to_int32(h)


def _check_num_buckets(num_buckets: int) -> None:
    if not 1 <= num_buckets <= 99_999_999:
        raise ConfigError(
            f"hoodie.bucket.index.num.buckets is {num_buckets}; it must be between 1 and 99999999 "
            "(bucket ids are written as 8 digits)"
        )


def bucket_for_hash_values(values: Sequence[str | None], num_buckets: int) -> int:
    """(List.hashCode(values) & Integer.MAX_VALUE) % num_buckets."""
    _check_num_buckets(num_buckets)
    return (java_list_hash(values) & 0x7FFFFFFF) % num_buckets


def hash_key_values(
    record_key: str, hash_fields: Sequence[str] | None, key_fields: Sequence[str]
) -> list[str | None]:
    """The hash keys Java 1.x derives from a record key (KeyGenUtils.extractRecordKeysByFields).

    ``hash_fields`` None means the default ``hoodie.bucket.index.hash.field`` = the record key fields.
    """
    fields = list(key_fields if hash_fields is None else hash_fields)
    take_all = not fields or fields == [""]
    if "," not in record_key or ":" not in record_key:
        return [record_key]
    values: list[str | None] = []
    n = len(record_key)
    pos = 0
    while pos < n:
        sep1 = record_key.find(":", pos)
        if sep1 < 0:
            # Java would fail here (substring(pos, -1)); it cannot have written such a key as a complex key.
            break
        field = record_key[pos:sep1]
        sep2 = record_key.find(":", sep1 + 1)
        keep = take_all or field in fields
        value_end = n
        if sep2 >= 0:
            comma = record_key.rfind(",", 0, sep2 + 1)
            while comma < sep1 and sep2 >= 0:
                sep2 = record_key.find(":", sep2 + 1)
                comma = record_key.rfind(",", 0, sep2 + 1) if sep2 >= 0 else -1
            if comma > 0 and comma > sep1:
                value_end = comma
        if keep:
            value = record_key[sep1 + 1 : value_end]
            values.append(None if value == NULL_PLACEHOLDER else "" if value == EMPTY_PLACEHOLDER else value)
        pos = value_end + 1
    return values if values else [record_key]


def bucket_for_record_key(
    record_key: str,
    num_buckets: int,
    hash_fields: Sequence[str] | None = None,
    key_fields: Sequence[str] = (),
) -> int:
    """Scalar bucket of one record key, exactly as Java 1.x computes it."""
    return bucket_for_hash_values(hash_key_values(record_key, hash_fields, key_fields), num_buckets)


# -- vectorized String.hashCode ------------------------------------------------------------------------------

_tables: list[tuple[np.ndarray, np.ndarray]] = []


def _block_tables() -> tuple[np.ndarray, np.ndarray]:
    """inv31^1..inv31^(2B) and 31^0..31^(2B) modulo 2^64 (uint64 arithmetic wraps exactly there)."""
    if not _tables:
        size = 2 * _BLOCK
        inv = np.cumprod(np.full(size, _INV31, dtype=_U64))
        pw = np.empty(size + 1, dtype=_U64)
        pw[0] = 1
        pw[1:] = np.cumprod(np.full(size, 31, dtype=_U64))
        _tables.append((inv, pw))
    return _tables[0]


def _hash_long_row(units: np.ndarray) -> int:
    """One row longer than the block: Horner over blocks, h = h * 31^m + hash(block)."""
    inv, pw = _block_tables()
    h = 0
    for s in range(0, len(units), _BLOCK):
        c = units[s : s + _BLOCK]
        m = len(c)
        block = int(np.sum(c * inv[:m], dtype=_U64)) * int(pw[m])
        h = (h * int(pw[m]) + block) % _M64
    return h & _MASK32


def _hash_rows(units: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """Any row lengths. For rows inside a group starting at unit cs:
    hash(row [s, e)) = 31^(e - cs) * sum_{s<=i<e} c_i * inv31^(i - cs + 1)  (mod 2^64, then mod 2^32),
    so one multiply and one segmented sum (np.add.reduceat) per unit. Groups are runs of rows starting in the
    same block of units, so a group spans at most two blocks; rows longer than a block are done alone.
    """
    inv, pw = _block_tables()
    n = len(rel) - 1
    lengths = np.diff(rel)
    out = np.zeros(n, dtype=np.uint32)
    long_rows = lengths > _BLOCK
    key = rel[:-1] // _BLOCK
    cut = np.zeros(n, dtype=bool)
    cut[0] = True
    cut[1:] = (key[1:] != key[:-1]) | long_rows[1:] | long_rows[:-1]
    starts = np.flatnonzero(cut).tolist()
    for a, b in zip(starts, starts[1:] + [n], strict=True):
        cs, ce = int(rel[a]), int(rel[b])
        if ce == cs:
            continue
        if long_rows[a]:
            out[a] = _hash_long_row(units[cs:ce])
            continue
        prod = units[cs:ce] * inv[: ce - cs]
        nonempty = lengths[a:b] > 0
        sums = np.add.reduceat(prod, rel[a:b][nonempty] - cs)
        ends = rel[a + 1 : b + 1][nonempty] - cs
        out[a:b][nonempty] = (pw[ends] * sums).astype(np.uint32)
    return out


def _hash_equal_length(units: np.ndarray, n: int, length: int) -> np.ndarray:
    """All rows of one length (ASCII): exact float64 matrix-vector product (< 2^53), then mod 2^32.

    Works in cache-sized row blocks (about 1 MiB of float64), which is several times faster than big ones.
    """
    mat = units[: n * length].reshape(n, length)
    weights = np.array([pow(31, length - 1 - j, 1 << 32) for j in range(length)], dtype=np.float64)
    out = np.empty(n, dtype=np.uint32)
    step = max(1, (1 << 17) // length)
    buf = np.empty((min(step, n), length), dtype=np.float64)
    for s in range(0, n, step):
        block = mat[s : s + step]
        fbuf = buf[: len(block)]
        fbuf[...] = block
        out[s : s + step] = (fbuf @ weights).astype(_U64).astype(np.uint32)
    return out


# rows come in runs of one length at least this long on average for the run-by-run path (java_string_hashes)
_MIN_MEAN_RUN = 256


def _hash_ascii(data: np.ndarray, rel: np.ndarray) -> np.ndarray:
    """String.hashCode of ASCII rows. Runs of rows of one length (fixed-width keys; integer keys in ascending
    order: all 6-digit ids, then all 7-digit ones) take the matrix product of _hash_equal_length, about twice
    as fast as the segmented sums of _hash_rows, which the rest take."""
    n = len(rel) - 1
    head = np.diff(rel[: 16 * _MIN_MEAN_RUN + 1])  # a look at the first rows spares random lengths the full count
    if n < _MIN_MEAN_RUN or np.count_nonzero(head[1:] != head[:-1]) >= 16:
        return _hash_rows(data, rel)
    lengths = np.diff(rel)
    changes = lengths[1:] != lengths[:-1]
    if np.count_nonzero(changes) + 1 > n // _MIN_MEAN_RUN:
        return _hash_rows(data, rel)
    starts = np.flatnonzero(changes) + 1
    out = np.empty(n, dtype=np.uint32)
    bounds = [0, *starts.tolist(), n]
    for s, e in zip(bounds[:-1], bounds[1:], strict=True):
        length, cs, ce = int(lengths[s]), int(rel[s]), int(rel[e])
        if length == 0:
            out[s:e] = 0  # "" hashes to 0
        elif length <= 4096:
            out[s:e] = _hash_equal_length(data[cs:ce], e - s, length)
        else:
            out[s:e] = _hash_rows(data[cs:ce], rel[s : e + 1] - cs)
    return out


def _utf16_units(data: np.ndarray, rel: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Transcode the UTF-8 buffer to UTF-16 code units and map row offsets onto them."""
    try:
        units = np.frombuffer(data.tobytes().decode("utf-8").encode("utf-16-le"), dtype="<u2")
    except UnicodeDecodeError as e:
        raise InvalidDataError(f"record keys are not valid UTF-8 ({e}); pass valid strings") from e
    # one unit per code point start, two for 4-byte sequences (surrogate pairs)
    per_byte = ((data & 0xC0) != 0x80).astype(np.int64) + (data >= 0xF0)
    cum = np.zeros(len(data) + 1, dtype=np.int64)
    np.cumsum(per_byte, out=cum[1:])
    return units, cum[rel]


def _string_buffers(arr: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """UTF-8 bytes of the array's rows (from the first row's start) and row offsets relative to them."""
    off_dtype = np.dtype(np.int64) if pa.types.is_large_string(arr.type) else np.dtype(np.int32)
    buffers = arr.buffers()
    raw: np.ndarray = np.frombuffer(
        buffers[1], dtype=off_dtype, count=len(arr) + 1, offset=arr.offset * off_dtype.itemsize
    )
    offsets = raw.astype(np.int64)
    base, end = int(offsets[0]), int(offsets[-1])
    if buffers[2] is None or end == base:
        return np.zeros(0, dtype=np.uint8), offsets - base
    return np.frombuffer(buffers[2], dtype=np.uint8)[base:end], offsets - base


def _as_string(arr: pa.Array | pa.ChunkedArray) -> pa.Array:
    if isinstance(arr, pa.ChunkedArray):
        arr = arr.combine_chunks() if arr.num_chunks != 1 else arr.chunk(0)
    if pa.types.is_dictionary(arr.type):
        arr = arr.dictionary_decode()
    if not (pa.types.is_string(arr.type) or pa.types.is_large_string(arr.type)):
        arr = pc.cast(arr, pa.string())
    return arr


# String.hashCode of a decimal number's digits, from its base-10^4 limbs: hash(digits) = sum over the digits,
# least significant first, of ('0' + d_j) * 31^j (mod 2^32), the '0's summed per length apart
_LIMB = 10_000
_POW10 = np.array([10**k for k in range(1, 20)], dtype=np.uint64)
_P31 = np.array([pow(31, j, 1 << 32) for j in range(21)], dtype=np.uint32)
_LIMB_HASH = sum(((np.arange(_LIMB, dtype=np.uint32) // np.uint32(10**i)) % np.uint32(10)) * _P31[i]
                 for i in range(4)).astype(np.uint32)
_ZERO_DIGITS = np.array([sum(48 * pow(31, j, 1 << 32) for j in range(n)) & _MASK32 for n in range(21)],
                        dtype=np.uint32)


def integer_keyed(column: pa.Array | pa.ChunkedArray) -> bool:
    """Whether a one-field key column's keys are its numbers as Java prints them (java_integer_string_hashes)."""
    return pa.types.is_integer(column.type) and column.type != pa.uint64() and not column.null_count


def java_integer_string_hashes(values: np.ndarray) -> np.ndarray:
    """String.hashCode of Long.toString of every value (uint32 bits), without building the strings: a load keyed
    by an integer column whose keys are not stored (virtual keys) needs only their buckets."""
    v = np.asarray(values).astype(np.int64, copy=False)
    negative = v < 0
    signed = bool(negative.any())
    magnitude = v.view(np.uint64)
    if signed:
        magnitude = magnitude.copy()
        magnitude[negative] = ~magnitude[negative] + np.uint64(1)  # two's complement: Long.MIN_VALUE too
    top = int(magnitude.max()) if len(v) else 0
    # limbs in uint32 once the values fit (the divisions are the cost)
    rest = magnitude.astype(np.uint32) if top <= _MASK32 else magnitude
    digits = np.ones(len(v), dtype=np.uint8)
    for power in _POW10[: len(str(top)) - 1]:
        digits += rest >= rest.dtype.type(power)
    out = _ZERO_DIGITS[digits]
    if signed:
        out[negative] += np.uint32(45) * _P31[digits[negative]]  # the leading '-'
    step = 0
    while True:
        rest, limb = np.divmod(rest, rest.dtype.type(_LIMB))
        out += _LIMB_HASH[limb] * _P31[4 * step]
        step += 1
        if 4 * step >= len(str(top)):
            return out


def java_string_hashes(arr: pa.Array | pa.ChunkedArray) -> np.ndarray:
    """String.hashCode of every row as uint32 (two's complement bits of Java's int); nulls hash as 0."""
    arr = _as_string(arr)
    n = len(arr)
    if n == 0:
        return np.zeros(0, dtype=np.uint32)
    data, rel = _string_buffers(arr)
    if len(data) and int(data.max()) >= 0x80:
        units, rel = _utf16_units(data, rel)
        out = _hash_rows(units, rel)
    else:
        out = _hash_ascii(data, rel)
    if arr.null_count:
        out[np.asarray(arr.is_null().to_numpy(zero_copy_only=False), dtype=bool)] = 0
    return out


# -- vectorized buckets --------------------------------------------------------------------------------------

_POW31_CACHE: list[np.ndarray] = []


def _pow31(k: np.ndarray) -> np.ndarray:
    """31^k mod 2^32 as uint64 for small non-negative k."""
    top = int(k.max()) + 1 if len(k) else 1
    if not _POW31_CACHE or len(_POW31_CACHE[0]) < top:
        size = max(top, 64)
        tab = np.empty(size, dtype=_U64)
        tab[0] = 1
        tab[1:] = np.cumprod(np.full(size - 1, 31, dtype=_U64))
        _POW31_CACHE[:] = [tab & _U64(_MASK32)]
    return _POW31_CACHE[0][k]


def _list_hash_from_parts(
    part_hash: np.ndarray, part_row: np.ndarray, n_rows: int
) -> tuple[np.ndarray, np.ndarray]:
    """List.hashCode per row of the parts (in row order); returns (hashes, parts per row)."""
    counts = np.bincount(part_row, minlength=n_rows).astype(np.int64)
    first = np.cumsum(counts) - counts
    rank = np.arange(len(part_row), dtype=np.int64) - first[part_row]
    contrib = part_hash.astype(_U64) * _pow31(counts[part_row] - 1 - rank)
    sums = np.zeros(n_rows, dtype=_U64)
    nonempty = counts > 0
    if len(part_row):
        sums[nonempty] = np.add.reduceat(contrib, first[nonempty])
    return ((_pow31(counts) + sums) & _U64(_MASK32)).astype(np.uint32), counts


def _complex_list_hashes(keys: pa.Array, fields: list[str]) -> np.ndarray:
    """List hashes of keys containing both ',' and ':', parsed like Java 1.x.

    Keys whose every ','-piece contains ':' parse exactly like a naive split (field = text before the first
    ':' of the piece, value = the rest); the others go through the scalar parser.
    """
    n = len(keys)
    pieces = pc.split_pattern(keys, ",")
    piece_row = pc.list_parent_indices(pieces).to_numpy(zero_copy_only=False).astype(np.int64)
    kv = pc.split_pattern(pieces.flatten(), ":", max_splits=1)
    has_colon = np.asarray(pc.list_value_length(kv).to_numpy(zero_copy_only=False)) == 2
    odd = np.zeros(n, dtype=bool)
    odd[piece_row[~has_colon]] = True
    # kv flattened: [field, value] per piece with a ':', [piece] otherwise
    items = kv.flatten()
    first = np.asarray(kv.offsets.to_numpy(zero_copy_only=False)[:-1], dtype=np.int64) - kv.offsets[0].as_py()
    keep = has_colon & ~odd[piece_row]
    if fields and fields != [""]:
        is_field = np.asarray(
            pc.is_in(items, value_set=pa.array(fields, pa.string())).to_numpy(zero_copy_only=False),
            dtype=bool,
        )
        keep &= is_field[first]
    value_at = first[keep] + 1
    item_hash = java_string_hashes(items)
    placeholder = np.asarray(
        pc.is_in(items, value_set=pa.array([NULL_PLACEHOLDER, EMPTY_PLACEHOLDER])).to_numpy(
            zero_copy_only=False
        ),
        dtype=bool,
    )
    item_hash[placeholder] = 0
    out, counts = _list_hash_from_parts(item_hash[value_at], piece_row[keep], n)
    # nothing kept -> Java hashes [recordKey]
    none_kept = np.flatnonzero(counts == 0)
    if len(none_kept):
        whole = java_string_hashes(keys.take(pa.array(none_kept)))
        out[none_kept] = ((whole.astype(_U64) + 31) & _U64(_MASK32)).astype(np.uint32)
    for i in np.flatnonzero(odd).tolist():
        out[i] = java_list_hash(hash_key_values(keys[i].as_py(), fields, ())) & _MASK32
    return out


def _bucket_ids_one(arr: pa.Array, num_buckets: int, parse: bool, fields: list[str]) -> np.ndarray:
    arr = _as_string(arr)
    if arr.null_count:
        raise InvalidDataError(
            f"{arr.null_count} record key(s) are null; every row needs a record key before bucketing"
        )
    both = np.zeros(len(arr), dtype=bool)
    # a key is parsed only if it holds both ',' and ':': one scan of the bytes finds most inputs without a ','
    if parse and len(arr) and bool(np.any(_string_buffers(arr)[0] == ord(","))):
        both = np.asarray(
            pc.and_(pc.match_substring(arr, ","), pc.match_substring(arr, ":")).to_numpy(
                zero_copy_only=False
            ),
            dtype=bool,
        )
    rows = np.flatnonzero(both)
    if len(rows) == 0:
        lh = java_string_hashes(arr)
        lh += np.uint32(31)  # List.hashCode([key]) = 31 + key.hashCode()
    else:
        lh = np.empty(len(arr), dtype=np.uint32)
        lh[rows] = _complex_list_hashes(arr.take(pa.array(rows)), fields)
        simple = np.flatnonzero(~both)
        if len(simple):
            lh[simple] = java_string_hashes(arr.take(pa.array(simple))) + np.uint32(31)
    return ((lh & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int32)


def bucket_ids(
    record_keys: pa.Array | pa.ChunkedArray,
    num_buckets: int,
    complex_key: bool = False,
    *,
    hash_fields: Sequence[str] | None = None,
) -> np.ndarray:
    """Bucket (int32) of every record key, as Java 1.x BucketIdentifier.getBucketId(key, hash_fields, n).

    Keys containing both ',' and ':' are parsed when ``complex_key`` is set or ``hash_fields`` is given
    (``hash_fields`` None = all fields of the key). With neither, every key is hashed whole: exact for
    Simple/Nonpartitioned keys unless a key itself looks like ``<keyfield>:..,..``; pass
    ``hash_fields=[key_field]`` to be exact there too.
    """
    _check_num_buckets(num_buckets)
    parse = complex_key or hash_fields is not None
    fields = list(hash_fields or [])
    chunks = record_keys.chunks if isinstance(record_keys, pa.ChunkedArray) else [record_keys]
    parts = [_bucket_ids_one(c, num_buckets, parse, fields) for c in chunks]
    return np.concatenate(parts) if parts else np.zeros(0, dtype=np.int32)


def bucket_ids_from_columns(columns: Sequence[pa.Array | pa.ChunkedArray], num_buckets: int) -> np.ndarray:
    """Bucket of List.hashCode over the string forms of the hash-field values, per row (nulls as null).

    Pass the hash fields in record-key order. This equals Java's bucket for the composite record key of the
    row whenever parsing that key gives back these values: no key-field value contains ',' and none is the
    literal ``__null__``/``__empty__``. ``bucket_ids_for_table`` checks that and is exact for every row.
    """
    _check_num_buckets(num_buckets)
    if not columns:
        raise ConfigError(
            "no bucket hash columns given; hoodie.bucket.index.hash.field needs at least one field"
        )
    h = np.ones(len(columns[0]), dtype=np.uint32)
    for i, col in enumerate(columns):
        forms = java_string_forms(col, f"hash column {i}", "record key")
        h = h * np.uint32(31) + java_string_hashes(forms)
    return ((h & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int32)


def bucket_ids_for_table(
    table: pa.Table,
    key_fields: Sequence[str],
    num_buckets: int,
    hash_fields: Sequence[str] | None = None,
    *,
    record_keys: pa.Array | None = None,
    single_field_prefixed: bool = False,
) -> np.ndarray:
    """Exact Java 1.x buckets for the rows of ``table`` (the writer's entry point).

    Composite keys hash the value columns directly; rows where a key value contains ',' or is a literal
    placeholder are recomputed from the record key string. ``record_keys`` (record_key_strings of the same
    rows) avoids building them twice.
    """
    _check_num_buckets(num_buckets)
    key_fields = list(key_fields)
    fields = list(key_fields if hash_fields is None else hash_fields)
    unknown = [f for f in fields if f not in key_fields]
    if unknown:
        raise ConfigError(
            f"bucket hash field(s) {unknown} are not record key fields {key_fields}; "
            "hoodie.bucket.index.hash.field must be a subset of the record key fields"
        )
    if len(key_fields) == 1:
        column = table.column(key_fields[0]) if key_fields[0] in table.column_names else None
        if column is not None and integer_keyed(column) and not single_field_prefixed:
            # a bare number: no ',' to parse; List.hashCode([key])
            lh = java_integer_string_hashes(column.to_numpy()) + np.uint32(31)
            return ((lh & np.uint32(0x7FFFFFFF)) % np.uint32(num_buckets)).astype(np.int32)
        keys = (
            record_keys
            if record_keys is not None
            else record_key_strings(table, key_fields, single_field_prefixed=single_field_prefixed)
        )
        return bucket_ids(keys, num_buckets, hash_fields=fields)
    if record_keys is None:
        record_keys = record_key_strings(table, key_fields)
    forms = {f: java_string_forms(table.column(f), f) for f in key_fields}
    # A ':' in a field name would shift Java's parse: then every row takes the exact string path.
    suspicious = np.full(table.num_rows, any(":" in f for f in key_fields), dtype=bool)
    for v in forms.values():
        risky = pc.or_(
            pc.match_substring(v, ","), pc.is_in(v, value_set=pa.array([NULL_PLACEHOLDER, EMPTY_PLACEHOLDER]))
        )
        suspicious |= np.asarray(pc.fill_null(risky, False).to_numpy(zero_copy_only=False), dtype=bool)
    ordered = [forms[f] for f in key_fields if f in fields]
    out = bucket_ids_from_columns(ordered, num_buckets)
    rows = np.flatnonzero(suspicious)
    if len(rows):
        out[rows] = bucket_ids(
            _as_string(record_keys).take(pa.array(rows)), num_buckets, True, hash_fields=fields
        )
    return out


# -- file ids ------------------------------------------------------------------------------------------------

_BUCKET_PREFIX = re.compile(r"[0-9]{8}")


def bucket_file_id_prefix(bucket: int) -> str:
    """BucketIdentifier.bucketIdStr: the bucket zero-padded to 8 digits."""
    if not 0 <= bucket <= 99_999_999:
        raise ConfigError(f"bucket id {bucket} does not fit 8 digits; use fewer buckets (at most 99999999)")
    return f"{bucket:08d}"


def new_bucket_file_id(bucket: int) -> str:
    """A new file group id for the bucket: random uuid4 with its first 8 chars replaced, plus ``-0``."""
    return bucket_file_id_prefix(bucket) + str(uuid.uuid4())[8:] + "-0"


def bucket_of_file_id(file_id: str) -> int | None:
    """The bucket encoded in a file id, or None when the first 8 chars are not digits.

    A plain uuid (tables without a bucket index) may start with 8 digits by chance; only trust the answer
    for tables whose writers used the bucket index.
    """
    if not _BUCKET_PREFIX.fullmatch(file_id[:8]):
        return None
    return int(file_id[:8])


def check_bucket_file_ids(file_groups: Iterable[tuple[str, str]], num_buckets: int) -> None:
    """Refuse to write into a table whose (partition, file id) groups are not one per bucket, each named by its
    bucket below `num_buckets`. Such groups hold keys the bucket index cannot find: a table written with another
    index whose hoodie.properties were given bucket settings by hand, or one whose properties lost a bucket
    count; a write would put their keys into new file groups beside them (duplicates)."""
    seen: dict[tuple[str, int], str] = {}
    for partition, file_id in file_groups:
        where = f"file group {file_id} in partition {partition or '(none)'}"
        bucket = bucket_of_file_id(file_id)
        problem = None
        if bucket is None:
            problem = f"{where} carries no bucket number: it was written without the bucket index"
        elif bucket >= num_buckets:
            problem = f"{where} is of bucket {bucket}, beyond the {num_buckets} buckets hoodie.properties sets"
        elif (partition, bucket) in seen:
            problem = f"{where} and file group {seen[(partition, bucket)]} both claim bucket {bucket}"
        if problem is not None:
            raise CorruptTableError(
                f"{problem}, though hoodie.properties sets hoodie.bucket.index.num.buckets={num_buckets}; writing "
                "would put existing keys into new file groups beside them: duplicate keys. Restore the table's own "
                "hoodie.properties (.hoodie/hoodie.properties.backup), or copy the rows into a new table")
        assert bucket is not None
        seen[(partition, bucket)] = file_id
