-- Note why entry :id failed to publish; its lease is left to lapse, so it is offered again
-- after it (at-least-once, with a pause rather than a hot loop).
UPDATE {schema}.outbox
SET last_error = :error
WHERE id = :id AND claimed_by = :relay_id AND published_at_ms IS NULL
