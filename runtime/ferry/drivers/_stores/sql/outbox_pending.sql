-- How many entries are not yet published.
SELECT count(*) AS pending FROM {schema}.outbox WHERE published_at_ms IS NULL
