-- Put the dead or cancelled runs of :ids back to queued at :now with fresh attempts, each
-- claimable again (_ready.sql), and wake workers (delivered on commit).
WITH retried AS (
    UPDATE {schema}.jobs
    SET state = 'queued', attempts = 0, run_at_ms = :now, finished_at_ms = NULL,
        cancel_requested_at_ms = NULL, updated_at_ms = :now
    WHERE id = ANY (:ids::bigint[]) AND state IN ('dead', 'cancelled')
    RETURNING id, priority, run_at_ms, queue, name, concurrency_key
),
became_ready AS (
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, :now::bigint AS now_ms
    FROM retried
),
{_ready}
SELECT pg_notify({channel}, queue) FROM (SELECT DISTINCT queue FROM retried) AS due
