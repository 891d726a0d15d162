"""Backfills: a job that pages through a source and resumes from its last checkpoint."""

from ferry._backfill.factory import BackfillPage, backfill

__all__ = ["BackfillPage", "backfill"]
