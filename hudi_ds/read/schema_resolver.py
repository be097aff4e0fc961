"""The table's current data schema: from the newest commit that records one.

hudi_ds records the exact Arrow schema (key `hudi_ds.arrow.schema`) beside Hudi's Avro `schema`
in the commit metadata, so Arrow types Avro cannot express (int8, int16, large types) read back as
written. Tables from other engines fall back to the Avro schema, then to hoodie.table.create.schema.
"""

from __future__ import annotations

import base64

import pyarrow as pa

from hudi_ds.config import TableConfig
from hudi_ds.errors import CorruptTableError
from hudi_ds.schema.avro import avro_to_arrow
from hudi_ds.schema.meta import strip_meta
from hudi_ds.timeline import Timeline

ARROW_SCHEMA_KEY = "hudi_ds.arrow.schema"


def encode_arrow_schema(schema: pa.Schema) -> str:
    return base64.b64encode(schema.serialize().to_pybytes()).decode("ascii")


def decode_arrow_schema(text: str) -> pa.Schema:
    return pa.ipc.read_schema(pa.py_buffer(base64.b64decode(text)))


def resolve_schema(config: TableConfig, timeline: Timeline, as_of: str | None = None) -> pa.Schema | None:
    """Data columns (no meta columns) of the newest commit visible at `as_of`, or None for an empty table."""
    commits = [c for c in timeline.commits() if as_of is None or c.requested_time <= as_of]
    for inst in reversed(commits):
        meta = timeline.commit_metadata(inst)
        extra = meta.extra_metadata or {}
        if extra.get(ARROW_SCHEMA_KEY):
            try:
                return decode_arrow_schema(extra[ARROW_SCHEMA_KEY])
            except Exception as exc:  # noqa: BLE001 - fall back to the Avro schema below
                if not extra.get("schema"):
                    raise CorruptTableError(
                        f"commit {inst.requested_time}: unreadable {ARROW_SCHEMA_KEY}: {exc}"
                    ) from exc
        if extra.get("schema"):
            return strip_meta(avro_to_arrow(extra["schema"]))
    if config.create_schema:
        return strip_meta(avro_to_arrow(config.create_schema))
    return None
