-- Write a batch of children of run $2 (step.enqueue), fenced like a step record: only while
-- worker $3 holds run $2's lease at $1 and no cancel of it was asked for. $4 is the batch,
-- a JSON array of runs (keys distinct; _columns.stored_columns, the payload as JSON text),
-- each due now. Every child written is counted in the parent's children_pending here
-- (ferry.drivers.fan_in) and is claimable (_ready.sql); a key that already has a run is
-- skipped and not counted (enqueue_existing resolves it). The parent's row lock (FOR NO
-- KEY UPDATE: its count changes below) is what an operator's cancel of it waits for, so
-- that cancel's run_descendants sees every child written before it.
-- Answers the runs written, then one last row (`id` NULL): whether the parent was held,
-- and whether a cancel of it was asked for (then nothing was written).
WITH parent AS (
    SELECT id, cancel_requested_at_ms IS NOT NULL AS cancel_requested
    FROM {schema}.jobs
    WHERE id = $2 AND state = 'running' AND locked_by = $3 AND lease_expires_at_ms > $1
    FOR NO KEY UPDATE
),
inserted AS (
    INSERT INTO {schema}.jobs (
        name, queue, payload, idempotency_key, max_attempts, run_at_ms, tenant, actor,
        concurrency_key, priority, rate_key, parent_id, created_at_ms, updated_at_ms,
        traceparent
    )
    SELECT c.name, c.queue, c.payload::jsonb, c.idempotency_key, c.max_attempts, $1, c.tenant,
           c.actor, c.concurrency_key, c.priority, c.rate_key, parent.id, $1, $1,
           c.traceparent
    FROM parent,
         jsonb_to_recordset($4::jsonb) AS c(
             name text, queue text, payload text, idempotency_key text, max_attempts integer,
             tenant text, actor text, concurrency_key text, priority integer, rate_key text,
             traceparent text
         )
    WHERE NOT parent.cancel_requested
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, idempotency_key, queue, run_at_ms, priority, name, concurrency_key
),
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $1::bigint AS now_ms
    FROM inserted
),
{_ready},
counted AS (
    UPDATE {schema}.jobs AS p
    SET children_pending = p.children_pending + (SELECT count(*) FROM inserted)
    FROM parent
    WHERE p.id = parent.id AND EXISTS (SELECT FROM inserted)
),
-- Part of the statement, so delivered on commit and never on rollback: the children are
-- due now, so each queue that got one wakes its idle workers.
notified AS (
    SELECT pg_notify({channel}, due.queue) FROM (SELECT DISTINCT queue FROM inserted) AS due
)
SELECT idempotency_key, id::text AS id, NULL::boolean AS held, NULL::boolean AS cancel_requested
FROM inserted
UNION ALL
SELECT NULL, NULL, EXISTS (SELECT FROM parent),
       coalesce((SELECT cancel_requested FROM parent), false)
WHERE (SELECT count(*) FROM notified) >= 0  -- reading `notified` is what runs it
