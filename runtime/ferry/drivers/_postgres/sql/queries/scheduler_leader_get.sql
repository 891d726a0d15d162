-- The scheduler lease if it is unexpired at $1.
SELECT holder, acquired_at_ms, expires_at_ms
FROM {schema}.scheduler_leader
WHERE id = 1 AND expires_at_ms > $1
