-- The value of record ($1, $2) unless it expired by $3.
SELECT value::text AS value FROM {schema}.records
WHERE space = $1 AND key = $2 AND (expires_at_ms IS NULL OR expires_at_ms > $3)
