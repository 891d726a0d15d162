-- Holders with an unexpired slot of key :key at :now, in code-point order.
SELECT holder FROM {schema}.lease_slots
WHERE key = :key AND expires_at_ms > :now
ORDER BY holder COLLATE "C"
