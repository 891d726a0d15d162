-- Store :value under (:space, :key), expiring at :expires_at_ms (null: never); the caller
-- checked its fence in the same transaction.
INSERT INTO ferry_records (space, key, value, expires_at_ms, updated_at_ms)
VALUES (:space, :key, :value, :expires_at_ms, :now)
ON CONFLICT (space, key) DO UPDATE SET value = excluded.value,
    expires_at_ms = excluded.expires_at_ms, updated_at_ms = excluded.updated_at_ms
