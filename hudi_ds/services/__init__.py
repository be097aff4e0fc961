"""Table services: rollback of failed or unwanted instants, compaction, cleaning, archiving."""
