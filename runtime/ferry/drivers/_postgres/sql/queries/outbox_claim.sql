-- Lease up to :limit unpublished entries to :relay_id until :until: rows never claimed,
-- and rows whose lease lapsed by :now (a crashed relay, a failed publish).
WITH due AS (
    SELECT id
    FROM {schema}.outbox
    WHERE published_at_ms IS NULL
      AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms <= :now)
    ORDER BY id
    LIMIT :limit
    FOR UPDATE SKIP LOCKED
)
UPDATE {schema}.outbox AS o
SET claimed_by = :relay_id, lease_expires_at_ms = :until, attempts = o.attempts + 1
FROM due
WHERE o.id = due.id
RETURNING o.id, o.type, o.payload::text AS payload, o.attempts, o.created_at_ms,
          o.traceparent
