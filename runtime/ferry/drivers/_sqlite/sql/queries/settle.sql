-- Write what a landed settle decided (ferry.drivers.settle.settle_run, read under the write
-- lock) on run :id: its next state and fields, the result an ack stores, the lease cleared,
-- a failed attempt's record (:failure) added to the newest 16 kB (ferry.drivers.failures),
-- and the mark of a wait (awaiting_children) kept only by a park (ferry.drivers.fan_in).
UPDATE ferry_jobs
SET state = :state,
    attempts = :attempts,
    run_at_ms = :run_at_ms,
    result = CASE WHEN :acked THEN :result ELSE result END,
    last_error_code = :error_code,
    last_error_message = :error_message,
    progress_current = :progress_current,
    progress_total = :progress_total,
    finished_at_ms = :finished_at_ms,
    failures = CASE WHEN :failure IS NULL THEN failures
                    ELSE substr(coalesce(failures, '') || :failure, -16384) END,
    locked_by = NULL,
    lease_expires_at_ms = NULL,
    awaiting_children = CASE WHEN :state = 'sleeping' THEN awaiting_children ELSE 0 END,
    updated_at_ms = :now
WHERE id = :id
