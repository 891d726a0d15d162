-- The W3C trace context a run (and an outbox entry) was enqueued under: its execution span
-- continues that trace and links to it (ferry._tracecontext).
ALTER TABLE ferry_jobs ADD COLUMN traceparent TEXT;
ALTER TABLE ferry_outbox ADD COLUMN traceparent TEXT;
