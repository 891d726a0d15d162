-- Every record of space $1 unexpired at $2.
SELECT key, value::text AS value FROM {schema}.records
WHERE space = $1 AND (expires_at_ms IS NULL OR expires_at_ms > $2)
