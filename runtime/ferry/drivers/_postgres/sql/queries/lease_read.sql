-- Lease $1 if it is unexpired at $2.
SELECT name, holder, term, acquired_at_ms, expires_at_ms
FROM {schema}.leases WHERE name = $1 AND expires_at_ms > $2
