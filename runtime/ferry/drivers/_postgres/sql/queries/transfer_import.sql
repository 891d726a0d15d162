-- Write runs moved from another store, with their steps, in one statement: $1..$18 are
-- parallel arrays, one element per run (keys distinct); $19..$25 parallel arrays, one
-- element per step, each naming its run by idempotency key, in the order they ran; $26 is
-- now. A key that already has a run is skipped (transfer_existing judges it).
-- Answers the runs it wrote. The caller runs this and transfer_existing in one
-- transaction, so a run and its steps commit together: a worker never claims a moved run
-- without the steps it must replay.
WITH inserted AS (
    INSERT INTO {schema}.jobs (
        name, queue, payload, idempotency_key, state, attempts, max_attempts, priority,
        run_at_ms, tenant, actor, concurrency_key, last_error_code, last_error_message,
        progress_current, progress_total, created_at_ms, finished_at_ms, updated_at_ms
    )
    SELECT r.name, r.queue, r.payload::jsonb, r.idempotency_key, r.state, r.attempts,
           r.max_attempts, r.priority, r.run_at_ms, r.tenant, r.actor, r.concurrency_key,
           r.last_error_code, r.last_error_message, r.progress_current, r.progress_total,
           r.created_at_ms, r.finished_at_ms, $26
    FROM unnest(
        $1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::integer[],
        $7::integer[], $8::integer[], $9::bigint[], $10::text[], $11::text[], $12::text[],
        $13::text[], $14::text[], $15::bigint[], $16::bigint[], $17::bigint[], $18::bigint[]
    ) AS r(
        name, queue, payload, idempotency_key, state, attempts, max_attempts, priority,
        run_at_ms, tenant, actor, concurrency_key, last_error_code, last_error_message,
        progress_current, progress_total, created_at_ms, finished_at_ms
    )
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, idempotency_key, state, queue, run_at_ms, priority, name, concurrency_key
),
-- A moved queued run is claimable here as it was there (_ready.sql); a dead one is not.
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $26::bigint AS now_ms
    FROM inserted
    WHERE state IN ('queued', 'sleeping')
),
{_ready},
-- Runs whether or not the final SELECT reads it (a data-modifying WITH always completes).
steps_written AS (
    INSERT INTO {schema}.steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
    SELECT i.id, s.name, s.kind, s.result::jsonb, s.started_at_ms, s.finished_at_ms, s.wake_at_ms
    FROM unnest(
        $19::text[], $20::text[], $21::text[], $22::text[], $23::bigint[], $24::bigint[],
        $25::bigint[]
    ) WITH ORDINALITY AS s(run_key, name, kind, result, started_at_ms, finished_at_ms,
                           wake_at_ms, ord)
    JOIN inserted AS i ON i.idempotency_key = s.run_key
    ORDER BY s.ord  -- steps.seq follows the order they ran
),
-- Delivered on commit, as an enqueue's: idle workers of queues given a due run wake now.
notified AS (
    SELECT pg_notify({channel}, due.queue)
    FROM (SELECT DISTINCT queue FROM inserted WHERE state = 'queued' AND run_at_ms <= $26) AS due
)
SELECT idempotency_key, id::text AS id,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM inserted
