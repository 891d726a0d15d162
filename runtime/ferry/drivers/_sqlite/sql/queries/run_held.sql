-- What the lease fence, the settle rules and the fan-in rules read of run :id
-- (ferry.drivers.settle and ferry.drivers.fan_in decide).
SELECT state, locked_by, lease_expires_at_ms, cancel_requested_at_ms, attempts, run_at_ms,
       last_error_code, last_error_message, progress_current, progress_total, finished_at_ms,
       queue, parent_id, children_pending, awaiting_children
FROM ferry_jobs
WHERE id = :id
