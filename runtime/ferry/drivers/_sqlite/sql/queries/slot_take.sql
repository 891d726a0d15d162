-- Holder :holder takes a slot of :key until :expires_at_ms (re-taking its own extends it).
-- Only ever run under the write lock, by a claim that counted the key's free slots.
INSERT INTO ferry_lease_slots (key, holder, expires_at_ms)
VALUES (:key, :holder, :expires_at_ms)
ON CONFLICT (key, holder) DO UPDATE SET expires_at_ms = excluded.expires_at_ms
