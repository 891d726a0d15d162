-- How many entries are not yet published.
SELECT count(*) FROM ferry_outbox WHERE published_at_ms IS NULL
