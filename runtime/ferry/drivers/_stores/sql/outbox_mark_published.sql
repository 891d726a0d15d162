-- Mark entries :ids published at :now, fenced on :relay_id still being the one that
-- claimed them; answers the ids that landed.
UPDATE {schema}.outbox
SET published_at_ms = :now, claimed_by = NULL, lease_expires_at_ms = NULL, last_error = NULL
WHERE id = ANY(:ids) AND claimed_by = :relay_id AND published_at_ms IS NULL
RETURNING id
