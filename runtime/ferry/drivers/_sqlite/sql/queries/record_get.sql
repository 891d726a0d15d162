-- The value of record (:space, :key) unless it expired by :now.
SELECT value FROM ferry_records
WHERE space = :space AND key = :key AND (expires_at_ms IS NULL OR expires_at_ms > :now)
