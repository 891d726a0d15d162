-- Take lease $1 for holder $2 at $3 until $3 + $4, or renew it if $2 holds it unexpired;
-- answers the lease when held. The conflicting row is locked before the WHERE is
-- re-checked, so of two nodes racing for a lapsed lease exactly one replaces it. A take
-- (of a free or lapsed lease, by anyone) starts a new term; a renewal keeps it.
INSERT INTO {schema}.leases AS l (name, holder, term, acquired_at_ms, expires_at_ms)
VALUES ($1, $2, 1, $3::bigint, $3::bigint + $4::bigint)
ON CONFLICT (name) DO UPDATE
SET term = CASE WHEN l.expires_at_ms > $3 THEN l.term ELSE l.term + 1 END,
    acquired_at_ms = CASE WHEN l.expires_at_ms > $3 THEN l.acquired_at_ms ELSE $3 END,
    holder = excluded.holder,
    expires_at_ms = excluded.expires_at_ms
WHERE l.holder = excluded.holder OR l.expires_at_ms <= $3
RETURNING name, holder, term, acquired_at_ms, expires_at_ms
