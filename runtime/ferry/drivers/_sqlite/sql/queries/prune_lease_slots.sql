-- Delete concurrency slots that expired by :now (left by workers that died holding them).
DELETE FROM ferry_lease_slots WHERE expires_at_ms <= :now
