-- The value of record (:space, :key) unless it expired by :now (JSON text: asyncpg reads
-- jsonb as text, SQLite stores the text).
SELECT value FROM {schema}.records
WHERE space = :space AND key = :key AND (expires_at_ms IS NULL OR expires_at_ms > :now)
