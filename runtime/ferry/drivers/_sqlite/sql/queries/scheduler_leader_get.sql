-- The scheduler lease if it is unexpired at :now.
SELECT holder, acquired_at_ms, expires_at_ms
FROM ferry_scheduler_leader
WHERE id = 1 AND expires_at_ms > :now
