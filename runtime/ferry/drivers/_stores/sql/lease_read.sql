-- Lease :name if it is unexpired at :now.
SELECT name, holder, term, acquired_at_ms, expires_at_ms
FROM {schema}.leases WHERE name = :name AND expires_at_ms > :now
