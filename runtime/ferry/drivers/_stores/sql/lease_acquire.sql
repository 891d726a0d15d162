-- Take lease :name for :holder at :now until :until, or renew it if :holder holds it
-- unexpired; answers the lease when held. The conflicting row is locked (SQLite: the file)
-- before the WHERE is re-checked, so of two nodes racing for a lapsed lease exactly one
-- replaces it. A take (of a free or lapsed lease, by anyone) starts a new term; a renewal
-- keeps it.
INSERT INTO {schema}.leases AS l (name, holder, term, acquired_at_ms, expires_at_ms)
VALUES (:name, :holder, 1, :now, :until)
ON CONFLICT (name) DO UPDATE
SET term = CASE WHEN l.expires_at_ms > :now THEN l.term ELSE l.term + 1 END,
    acquired_at_ms = CASE WHEN l.expires_at_ms > :now THEN l.acquired_at_ms ELSE :now END,
    holder = excluded.holder,
    expires_at_ms = excluded.expires_at_ms
WHERE l.holder = excluded.holder OR l.expires_at_ms <= :now
RETURNING name, holder, term, acquired_at_ms, expires_at_ms
