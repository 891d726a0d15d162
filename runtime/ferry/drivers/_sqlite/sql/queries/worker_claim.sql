-- The claim of a worker running jobs that declare concurrency: like `claim`, and it skips
-- runs whose key is full instead of claiming them only to defer them. :limits is a JSON
-- object {job name: limit}. Within the batch, the n-th run of a key is claimed only while
-- the key has n free slots; the caller takes each claimed run's slot (slot_take) in the
-- same transaction, so a limit-1 key hands over at the speed of a settle.
WITH limits AS (
    SELECT key AS name, value AS lim FROM json_each(:limits)
),
live AS (
    SELECT key, count(*) AS held
    FROM ferry_lease_slots
    WHERE expires_at_ms > :now
    GROUP BY key
),
picked AS (
    SELECT j.id, j.concurrency_key AS key, j.priority, j.run_at_ms,
           CASE WHEN j.concurrency_key IS NOT NULL
                THEN (SELECT lim FROM limits WHERE limits.name = j.name) END AS lim
    FROM ferry_jobs AS j
    WHERE j.state IN ('queued', 'sleeping', 'running')
      AND j.run_at_ms <= :now
      AND (j.state <> 'running' OR j.lease_expires_at_ms <= :now)
      AND j.queue NOT IN (SELECT queue FROM ferry_paused_queues)
      AND (:queues IS NULL OR j.queue IN (SELECT value FROM json_each(:queues)))
      AND (:names IS NULL OR j.name IN (SELECT value FROM json_each(:names)))
      AND (j.concurrency_key IS NULL
           OR NOT EXISTS (
               SELECT 1 FROM limits AS l
               WHERE l.name = j.name
                 AND coalesce((SELECT held FROM live WHERE live.key = j.concurrency_key), 0)
                     >= l.lim))
    ORDER BY j.priority DESC, j.run_at_ms, j.id
    LIMIT :limit
),
ranked AS (
    SELECT id, key, lim,
           row_number() OVER (PARTITION BY key ORDER BY priority DESC, run_at_ms, id) AS nth
    FROM picked
)
UPDATE ferry_jobs
SET state = 'running',
    attempts = attempts + 1,
    locked_by = :worker_id,
    lease_expires_at_ms = :lease_until,
    awaiting_children = 0,  -- a claim ends any park on a wait (ferry.drivers.fan_in)
    updated_at_ms = :now
WHERE id IN (
    SELECT id FROM ranked
    WHERE lim IS NULL
       OR nth <= lim - coalesce((SELECT held FROM live WHERE live.key = ranked.key), 0)
)
RETURNING id AS pk, CAST(id AS TEXT) AS id, name, queue, payload, idempotency_key, attempts,
          max_attempts, tenant, actor, concurrency_key, priority, run_at_ms, created_at_ms,
          lease_expires_at_ms, rate_key, rate_deferred_until_ms IS NOT NULL AS rate_booked,
          traceparent
