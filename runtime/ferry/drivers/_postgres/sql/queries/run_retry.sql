-- Put dead or cancelled run :id back to queued at :now with fresh attempts, and wake
-- workers. Answers a row when it changed the run.
WITH retried AS (
    UPDATE {schema}.jobs
    SET state = 'queued', attempts = 0, run_at_ms = :now, finished_at_ms = NULL,
        cancel_requested_at_ms = NULL, updated_at_ms = :now
    WHERE id = :id AND state IN ('dead', 'cancelled')
    RETURNING queue
)
SELECT pg_notify({channel}, queue) FROM retried
