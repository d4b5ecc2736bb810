"""The HTTP layer: blueprints, schemas, the one error handler, seat-token auth."""
