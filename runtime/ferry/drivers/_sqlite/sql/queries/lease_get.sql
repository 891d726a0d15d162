-- Lease :name as stored (lapsed or not): what a take or renewal decides on, under the lock.
SELECT name, holder, term, acquired_at_ms, expires_at_ms FROM ferry_leases WHERE name = :name
