-- Delete concurrency slots expired by :before (left by workers that died holding them),
-- all at once (:batch is not needed: a slot is a small row); a row per slot deleted.
DELETE FROM {schema}.lease_slots WHERE expires_at_ms <= :before RETURNING 1
