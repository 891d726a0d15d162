-- Write a batch of runs in one statement; a key that already has a run is skipped.
-- $1..$12 are parallel arrays, one element per request (keys distinct; $12 the trace
-- contexts); $13 is now.
-- Answers the runs it wrote; the caller resolves the skipped keys with enqueue_existing.
-- (Resolving them here too costs every enqueue a join for the rare duplicate, and could
-- not see a key committed by another transaction while this statement ran anyway.)
WITH inserted AS (
    INSERT INTO {schema}.jobs (
        name, queue, payload, idempotency_key, max_attempts, run_at_ms,
        tenant, actor, concurrency_key, priority, rate_key, created_at_ms, updated_at_ms,
        traceparent
    )
    SELECT r.name, r.queue, r.payload::jsonb, r.idempotency_key, r.max_attempts,
           coalesce(r.run_at_ms, $13), r.tenant, r.actor, r.concurrency_key, r.priority,
           r.rate_key, $13, $13, r.traceparent
    FROM unnest(
        $1::text[], $2::text[], $3::text[], $4::text[], $5::integer[],
        $6::bigint[], $7::text[], $8::text[], $9::text[], $10::integer[], $11::text[],
        $12::text[]
    ) AS r(
        name, queue, payload, idempotency_key, max_attempts,
        run_at_ms, tenant, actor, concurrency_key, priority, rate_key, traceparent
    )
    ON CONFLICT (idempotency_key) DO NOTHING
    RETURNING id, idempotency_key, queue, run_at_ms, priority, name, concurrency_key
),
-- Every run written is claimable (_ready.sql).
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $13::bigint AS now_ms
    FROM inserted
),
{_ready},
-- Part of the statement, so delivered on commit and never on rollback. A queue that got a
-- run due now is woken (payload: the queue); one that got runs for later is told when the
-- soonest of them falls due (payload: `<queue>@<run_at_ms>`), so an idle worker wakes for
-- it then rather than at its next poll (later ones in the batch are found by the poll).
notified AS (
    SELECT pg_notify({channel}, announced.payload)
    FROM (
        SELECT DISTINCT queue AS payload FROM inserted WHERE run_at_ms <= $13
        UNION ALL
        SELECT queue || '@' || min(run_at_ms) FROM inserted WHERE run_at_ms > $13 GROUP BY queue
    ) AS announced
)
SELECT idempotency_key, id::text AS id,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM inserted
