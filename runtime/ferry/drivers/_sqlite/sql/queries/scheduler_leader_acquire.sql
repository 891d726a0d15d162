-- Take the scheduler lease for :holder until :expires_at_ms if it is free or lapsed by
-- :now, or renew it if :holder has it; answers a row when :holder leads afterwards.
INSERT INTO ferry_scheduler_leader AS l (id, holder, acquired_at_ms, expires_at_ms)
VALUES (1, :holder, :now, :expires_at_ms)
ON CONFLICT (id) DO UPDATE
SET holder = excluded.holder,
    acquired_at_ms = CASE WHEN l.holder = excluded.holder THEN l.acquired_at_ms
                          ELSE excluded.acquired_at_ms END,
    expires_at_ms = excluded.expires_at_ms
WHERE l.holder = excluded.holder OR l.expires_at_ms <= :now
RETURNING holder
