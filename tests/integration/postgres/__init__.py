"""Integration tests of the PostgreSQL driver against a real server."""
