"""The metadata table's format layer: its record schema (`avro_schema`) and records (`records`)."""
