-- Mark entries :ids (a JSON array) published at :now, fenced on :relay_id still being the
-- one that claimed them; answers the ids that landed.
UPDATE ferry_outbox
SET published_at_ms = :now, claimed_by = NULL, lease_expires_at_ms = NULL, last_error = NULL
WHERE id IN (SELECT value FROM json_each(:ids)) AND claimed_by = :relay_id
  AND published_at_ms IS NULL
RETURNING CAST(id AS TEXT) AS id
