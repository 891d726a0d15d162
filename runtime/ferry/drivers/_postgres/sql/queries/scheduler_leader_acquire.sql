-- Take or renew the scheduler lease for holder $1 at $2 until $3; answers a row when held.
-- The conflicting row is locked before the WHERE is re-checked, so of two nodes racing for
-- an expired row exactly one replaces it. Renewal is the same statement: the holder's own
-- row always passes the WHERE, even a lapsed one nobody took meanwhile.
INSERT INTO {schema}.scheduler_leader AS l (id, holder, acquired_at_ms, expires_at_ms)
VALUES (1, $1, $2, $3)
ON CONFLICT (id) DO UPDATE
SET holder = excluded.holder,
    acquired_at_ms = CASE WHEN l.holder = excluded.holder THEN l.acquired_at_ms
                          ELSE excluded.acquired_at_ms END,
    expires_at_ms = excluded.expires_at_ms
WHERE l.holder = excluded.holder OR l.expires_at_ms <= $2
RETURNING holder
