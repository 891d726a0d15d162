-- Put runs :ids still `moving` under drain :drain_id back in the state they had, at :now;
-- answers the runs released (on SQLite, a queued one due now wakes this process's
-- workers at once; elsewhere the workers' next poll finds it).
UPDATE {schema}.jobs
SET state = moving_from, moving_from = NULL, moving_to = NULL, locked_by = NULL,
    updated_at_ms = :now
WHERE id = ANY(:ids) AND state = 'moving' AND locked_by = :drain_id
RETURNING CAST(id AS TEXT) AS id, state, run_at_ms
