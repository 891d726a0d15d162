-- Put run :id (dead or cancelled, checked under the write lock) back to queued at :now
-- with fresh attempts.
UPDATE ferry_jobs
SET state = 'queued', attempts = 0, run_at_ms = :now, finished_at_ms = NULL,
    cancel_requested_at_ms = NULL, updated_at_ms = :now
WHERE id = :id
