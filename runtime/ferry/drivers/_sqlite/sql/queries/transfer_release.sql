-- Put runs :ids (a JSON array) still `moving` under drain :drain_id back in the state they
-- had, at :now; answers the ids released.
UPDATE ferry_jobs
SET state = moving_from, moving_from = NULL, moving_to = NULL, locked_by = NULL,
    updated_at_ms = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND state = 'moving' AND locked_by = :drain_id
RETURNING CAST(id AS TEXT) AS id, state, queue, run_at_ms
