-- Write runs moved from another store (:runs, a JSON array of objects, keys distinct; each
-- payload as JSON text) in the state, attempts, error, instants and progress they carry;
-- :now is now. A key that already has a run is skipped (transfer_existing judges it).
-- Answers the runs it wrote; the caller writes their steps (transfer_import_steps) in the
-- same transaction, so a worker never claims a moved run without the steps it must replay.
WITH inserted AS (
    INSERT INTO {schema}.jobs (
        name, queue, payload, idempotency_key, state, attempts, max_attempts, priority,
        run_at_ms, tenant, actor, concurrency_key, last_error_code, last_error_message,
        progress_current, progress_total, created_at_ms, finished_at_ms, rate_key,
        updated_at_ms
    )
    SELECT r.name, r.queue, r.payload::jsonb, r.idempotency_key, r.state, r.attempts,
           r.max_attempts, r.priority, r.run_at_ms, r.tenant, r.actor, r.concurrency_key,
           r.last_error_code, r.last_error_message, r.progress_current, r.progress_total,
           r.created_at_ms, r.finished_at_ms, r.rate_key, :now
    FROM jsonb_to_recordset(:runs::text::jsonb) AS r(
        name text, queue text, payload text, idempotency_key text, state text,
        attempts integer, max_attempts integer, priority integer, run_at_ms bigint,
        tenant text, actor text, concurrency_key text, last_error_code text,
        last_error_message text, progress_current bigint, progress_total bigint,
        created_at_ms bigint, finished_at_ms bigint, rate_key text
    )
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, idempotency_key, state, queue, run_at_ms, priority, name, concurrency_key
),
-- A moved queued run is claimable here as it was there (_ready.sql); a dead one is not.
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, :now::bigint AS now_ms
    FROM inserted
    WHERE state IN ('queued', 'sleeping')
),
{_ready},
-- Delivered on commit, as an enqueue's: idle workers of queues given a due run wake now.
notified AS (
    SELECT pg_notify({channel}, due.queue)
    FROM (SELECT DISTINCT queue FROM inserted WHERE state = 'queued' AND run_at_ms <= :now)
         AS due
)
SELECT id::text AS id, idempotency_key, state, run_at_ms,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM inserted
