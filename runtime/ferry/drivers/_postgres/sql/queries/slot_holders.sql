-- Holders with an unexpired slot of key $1 at $2, in code-point order.
SELECT holder FROM {schema}.lease_slots
WHERE key = $1 AND expires_at_ms > $2
ORDER BY holder COLLATE "C"
