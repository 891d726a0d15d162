-- Cancel the queued or sleeping runs of :ids at :now: they end here (a running one is
-- asked to stop instead: run_cancel_request).
UPDATE {schema}.jobs
SET state = 'cancelled', finished_at_ms = :now, updated_at_ms = :now,
    last_error_code = :error_code, last_error_message = :error_message
WHERE id = ANY(:ids) AND state IN ('queued', 'sleeping')
RETURNING id
