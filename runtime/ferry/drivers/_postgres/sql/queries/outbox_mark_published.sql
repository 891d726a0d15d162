-- Mark entries $1 published at $3, fenced on relay $2 still being the one that claimed
-- them; answers the ids that landed.
UPDATE {schema}.outbox
SET published_at_ms = $3, claimed_by = NULL, lease_expires_at_ms = NULL, last_error = NULL
WHERE id = ANY($1::bigint[]) AND claimed_by = $2 AND published_at_ms IS NULL
RETURNING id
