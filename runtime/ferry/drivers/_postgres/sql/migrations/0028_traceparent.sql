-- The W3C trace context a run (and an outbox entry) was enqueued under: its execution span
-- continues that trace and links to it (ferry._tracecontext).
ALTER TABLE {schema}.jobs ADD COLUMN traceparent text;
ALTER TABLE {schema}.outbox ADD COLUMN traceparent text;
COMMENT ON COLUMN {schema}.jobs.traceparent IS 'The W3C traceparent of the span the run was enqueued under.';
