-- Delete concurrency slots that expired before $1 (left by workers that died holding them).
DELETE FROM {schema}.lease_slots WHERE expires_at_ms <= $1
