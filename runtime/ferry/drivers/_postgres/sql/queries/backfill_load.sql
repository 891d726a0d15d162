-- The checkpoint of backfill $1, if it has saved one.
SELECT key, cursor::text AS cursor, processed, pages, done, updated_at_ms
FROM {schema}.backfills
WHERE key = $1
