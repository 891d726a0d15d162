"""The transactional outbox and its relay, against a real PostgreSQL server."""
