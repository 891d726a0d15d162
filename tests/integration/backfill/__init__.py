"""Backfills: paging with a checkpoint ledger, resumed after a crash."""
