"""Scheduler tests against a real PostgreSQL server and real scheduler processes."""
