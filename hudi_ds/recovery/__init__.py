"""Recovering from failed writes: heartbeats say which pending instants are alive, rollback removes the rest."""
