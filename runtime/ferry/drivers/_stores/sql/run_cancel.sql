-- Cancel queued or sleeping run :id at :now: it ends here (a running one is asked to stop
-- instead: run_cancel_request). Answers a row when it changed the run.
UPDATE {schema}.jobs
SET state = 'cancelled', finished_at_ms = :now, updated_at_ms = :now,
    last_error_code = :error_code, last_error_message = :error_message
WHERE id = :id AND state IN ('queued', 'sleeping')
RETURNING id
