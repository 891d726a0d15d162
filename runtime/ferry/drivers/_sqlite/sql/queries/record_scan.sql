-- Every record of :space unexpired at :now.
SELECT key, value FROM ferry_records
WHERE space = :space AND (expires_at_ms IS NULL OR expires_at_ms > :now)
