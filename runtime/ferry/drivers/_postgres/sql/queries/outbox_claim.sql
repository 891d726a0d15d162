-- Lease up to $4 unpublished entries to relay $1 until $3 ($2 is now): rows never
-- claimed, and rows whose lease lapsed (a crashed relay, a failed publish).
WITH due AS (
    SELECT id
    FROM {schema}.outbox
    WHERE published_at_ms IS NULL
      AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms <= $2)
    ORDER BY id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
)
UPDATE {schema}.outbox AS o
SET claimed_by = $1, lease_expires_at_ms = $3, attempts = o.attempts + 1
FROM due
WHERE o.id = due.id
RETURNING o.id, o.type, o.payload::text AS payload, o.attempts, o.created_at_ms,
          o.traceparent
