-- Put dead or cancelled run $1 back to queued at $2 with fresh attempts, and wake workers.
-- Answers the run's name and state before, and `changed`; no row when the run is missing.
WITH target AS (
    SELECT id, name, state FROM {schema}.jobs WHERE id = $1 FOR UPDATE
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
    SELECT pg_notify({channel}, queue) FROM retried
)
SELECT name, state, (SELECT count(*) FROM notified) > 0 AS changed
FROM target
