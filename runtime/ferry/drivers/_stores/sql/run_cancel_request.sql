-- Record an operator's cancel of running run :id at :now: its worker's next heartbeat
-- reads it, aborts the body and settles the run as cancelled (a repeat keeps the first).
-- Answers a row when the run is running.
UPDATE {schema}.jobs
SET cancel_requested_at_ms = coalesce(cancel_requested_at_ms, :now), updated_at_ms = :now
WHERE id = :id AND state = 'running'
RETURNING id
