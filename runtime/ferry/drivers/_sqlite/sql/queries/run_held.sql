-- What the lease fence and the settle rules read of run :id (ferry.drivers.settle decides).
SELECT state, locked_by, lease_expires_at_ms, cancel_requested_at_ms, attempts, run_at_ms,
       last_error_code, last_error_message, progress_current, progress_total, finished_at_ms,
       queue
FROM ferry_jobs
WHERE id = :id
