-- Delete concurrency slots that expired before $1 (left by workers that died holding them);
-- answers how many went.
WITH gone AS (
    DELETE FROM {schema}.lease_slots WHERE expires_at_ms <= $1 RETURNING 1
)
SELECT count(*) FROM gone
