"""Redis storage: connections, matches saved atomically, idempotency records, the event log."""
