-- Record an operator's cancel of the running runs of :ids at :now: each one's worker's
-- next heartbeat reads it, aborts the body and settles the run as cancelled (a repeat
-- keeps the first).
UPDATE {schema}.jobs
SET cancel_requested_at_ms = coalesce(cancel_requested_at_ms, :now), updated_at_ms = :now
WHERE id = ANY(:ids) AND state = 'running'
RETURNING id
