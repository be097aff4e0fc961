"""The metadata table: its format layer (record schema `avro_schema`, records and Hudi's merge rules `records`,
files as Hudi writes them `hfiles`), its layout (`layout`), the file listing it holds (`listing`), and its upkeep
by hudi_ds's writers (`bootstrap`, `sync`, its own `compaction` and clean)."""
