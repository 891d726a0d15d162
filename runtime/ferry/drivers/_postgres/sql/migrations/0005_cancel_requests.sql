-- An operator's cancel of a running run. The run cannot be settled from outside its worker
-- (every settle is fenced on the lease holder), so the request is a column: the worker's
-- heartbeat reads it, aborts the body with X_CANCELLED and settles the run as cancelled.
ALTER TABLE {schema}.jobs ADD COLUMN cancel_requested_at_ms bigint;

COMMENT ON COLUMN {schema}.jobs.cancel_requested_at_ms IS 'When an operator asked to cancel the run while it was running; its worker settles it as cancelled.';
