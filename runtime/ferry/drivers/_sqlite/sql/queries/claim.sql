-- Lease up to :limit due runs to :worker_id until :lease_until, counting an attempt: one
-- UPDATE … RETURNING, so picking and leasing are one step. :queues/:names (JSON arrays)
-- restrict queues/names (NULL: any).
-- A run is due when queued or sleeping with run_at <= now, or running with a lapsed lease:
-- the next claim takes it over, so no sweeper is needed. No SKIP LOCKED is needed either:
-- the statement holds the file's write lock from its first read, so concurrent claimers
-- (threads, processes) take disjoint runs one after the other.
-- The state term repeats ferry_jobs_claim_order's, so the scan walks that index in claim
-- order and stops after :limit rows.
UPDATE ferry_jobs
SET state = 'running',
    attempts = attempts + 1,
    locked_by = :worker_id,
    lease_expires_at_ms = :lease_until,
    awaiting_children = 0,  -- a claim ends any park on a wait (ferry.drivers.fan_in)
    updated_at_ms = :now
WHERE id IN (
    SELECT id
    FROM ferry_jobs
    WHERE state IN ('queued', 'sleeping', 'running')
      AND run_at_ms <= :now
      AND (state <> 'running' OR lease_expires_at_ms <= :now)
      AND queue NOT IN (SELECT queue FROM ferry_paused_queues)
      AND (:queues IS NULL OR queue IN (SELECT value FROM json_each(:queues)))
      AND (:names IS NULL OR name IN (SELECT value FROM json_each(:names)))
    ORDER BY priority DESC, run_at_ms, id
    LIMIT :limit
)
RETURNING id AS pk, CAST(id AS TEXT) AS id, name, queue, payload, idempotency_key, attempts,
          max_attempts, tenant, actor, concurrency_key, priority, run_at_ms, created_at_ms,
          lease_expires_at_ms, rate_key, rate_deferred_until_ms IS NOT NULL AS rate_booked,
          traceparent
