-- The checkpoint of backfill :key, if it has saved one.
SELECT key, cursor, processed, pages, done, updated_at_ms
FROM ferry_backfills
WHERE key = :key
