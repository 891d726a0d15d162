-- Lease up to :limit unpublished entries to :relay_id until :lease_until: rows never
-- claimed, and rows whose lease lapsed by :now (a crashed relay, a failed publish).
UPDATE ferry_outbox
SET claimed_by = :relay_id, lease_expires_at_ms = :lease_until, attempts = attempts + 1
WHERE id IN (
    SELECT id
    FROM ferry_outbox
    WHERE published_at_ms IS NULL
      AND (lease_expires_at_ms IS NULL OR lease_expires_at_ms <= :now)
    ORDER BY id
    LIMIT :limit
)
RETURNING id AS pk, CAST(id AS TEXT) AS id, type, payload, attempts, created_at_ms,
          traceparent
