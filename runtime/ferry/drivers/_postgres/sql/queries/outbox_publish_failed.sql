-- Note why entry $1 failed to publish; the lease is left to lapse, so the entry is
-- offered again after it (at-least-once, with a pause rather than a hot loop).
UPDATE {schema}.outbox
SET last_error = $3
WHERE id = $1 AND claimed_by = $2 AND published_at_ms IS NULL
