"""The metadata table's format layer: its record schema (`avro_schema`), its records and Hudi's merge rules
(`records`), and its files as Hudi writes them (`hfiles`)."""
