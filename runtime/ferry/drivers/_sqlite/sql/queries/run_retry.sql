-- Put the dead or cancelled runs of :ids back to queued at :now with fresh attempts.
UPDATE ferry_jobs
SET state = 'queued', attempts = 0, run_at_ms = :now, finished_at_ms = NULL,
    cancel_requested_at_ms = NULL, updated_at_ms = :now
WHERE id IN (SELECT value FROM json_each(:ids)) AND state IN ('dead', 'cancelled')
RETURNING id
