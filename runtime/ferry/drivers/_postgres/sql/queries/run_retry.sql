-- Put the dead or cancelled runs of :ids back to queued at :now with fresh attempts, and
-- wake workers (delivered on commit).
WITH retried AS (
    UPDATE {schema}.jobs
    SET state = 'queued', attempts = 0, run_at_ms = :now, finished_at_ms = NULL,
        cancel_requested_at_ms = NULL, updated_at_ms = :now
    WHERE id = ANY (:ids::bigint[]) AND state IN ('dead', 'cancelled')
    RETURNING queue
)
SELECT pg_notify({channel}, queue) FROM (SELECT DISTINCT queue FROM retried) AS due
