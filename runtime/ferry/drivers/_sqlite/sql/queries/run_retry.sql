-- Put dead or cancelled run :id back to queued at :now with fresh attempts. Answers a row
-- when it changed the run.
UPDATE ferry_jobs
SET state = 'queued', attempts = 0, run_at_ms = :now, finished_at_ms = NULL,
    cancel_requested_at_ms = NULL, updated_at_ms = :now
WHERE id = :id AND state IN ('dead', 'cancelled')
RETURNING id
