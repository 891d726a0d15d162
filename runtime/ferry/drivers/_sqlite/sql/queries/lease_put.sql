-- Store lease :name as decided by the caller under the write lock.
INSERT INTO ferry_leases (name, holder, term, acquired_at_ms, expires_at_ms)
VALUES (:name, :holder, :term, :acquired_at_ms, :expires_at_ms)
ON CONFLICT (name) DO UPDATE SET holder = excluded.holder, term = excluded.term,
    acquired_at_ms = excluded.acquired_at_ms, expires_at_ms = excluded.expires_at_ms
