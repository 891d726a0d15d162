-- Put every dead or cancelled run of $1 (ids) back to queued at $2 with fresh attempts,
-- and wake workers. Answers, per run found, its name and state before, and `changed`.
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = ANY ($1::bigint[]) FOR UPDATE
),
retried AS (
    UPDATE {schema}.jobs AS j
    SET state = 'queued', attempts = 0, run_at_ms = $2, finished_at_ms = NULL,
        cancel_requested_at_ms = NULL, updated_at_ms = $2
    FROM target
    WHERE j.id = target.id AND target.state IN ('dead', 'cancelled')
    RETURNING j.id, j.priority, j.run_at_ms, j.queue, j.name, j.concurrency_key
),
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $2::bigint AS now_ms
    FROM retried
),
{_ready},
notified AS (
    SELECT pg_notify({channel}, queue) FROM (SELECT DISTINCT queue FROM retried) AS due
)
SELECT t.id::text, t.name, t.state, r.id IS NOT NULL AS changed,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM target AS t LEFT JOIN retried AS r ON r.id = t.id
