-- The live holders of key :key at :now, in code-point order (BINARY collation).
SELECT holder FROM ferry_lease_slots
WHERE key = :key AND expires_at_ms > :now
ORDER BY holder
