"""Timeline: instants, instant times, commit metadata and Avro instant files of Hudi tables (v6, v8, v9)."""

from __future__ import annotations

from hudi_ds.timeline.avro_models import decode_avro_instant, encode_avro_instant
from hudi_ds.timeline.commit_metadata import CommitMetadata, WriteStat
from hudi_ds.timeline.instant import (
    COMMIT_ACTIONS,
    Action,
    Instant,
    State,
    datetime_to_instant,
    instant_file_name,
    instant_to_datetime,
    new_instant_time,
    normalize_instant_time,
    parse_instant_file_name,
)
from hudi_ds.timeline.timeline import Timeline, TimelineWriter, timeline_folder

__all__ = [
    "COMMIT_ACTIONS", "Action", "CommitMetadata", "Instant", "State", "Timeline", "TimelineWriter",
    "WriteStat",
    "datetime_to_instant", "decode_avro_instant", "encode_avro_instant", "instant_file_name",
    "instant_to_datetime", "new_instant_time", "normalize_instant_time", "parse_instant_file_name",
    "timeline_folder",
]
