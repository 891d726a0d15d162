-- Write a batch of runs in one statement; a key that already has a run is skipped.
-- :batch is a JSON array of objects, one per request (keys distinct); :now is now;
-- :parent_id the run whose children they are (step.enqueue; NULL: none).
-- Answers the runs it wrote; the caller resolves the skipped keys with enqueue_existing.
INSERT INTO ferry_jobs (
    name, queue, payload, idempotency_key, max_attempts, run_at_ms,
    tenant, actor, concurrency_key, priority, rate_key, parent_id, created_at_ms,
    updated_at_ms, traceparent
)
SELECT json_extract(r.value, '$.name'), json_extract(r.value, '$.queue'),
       json_extract(r.value, '$.payload'), json_extract(r.value, '$.idempotency_key'),
       json_extract(r.value, '$.max_attempts'),
       coalesce(json_extract(r.value, '$.run_at_ms'), :now),
       json_extract(r.value, '$.tenant'), json_extract(r.value, '$.actor'),
       json_extract(r.value, '$.concurrency_key'), json_extract(r.value, '$.priority'),
       json_extract(r.value, '$.rate_key'), :parent_id, :now, :now,
       json_extract(r.value, '$.traceparent')
FROM json_each(:batch) AS r
WHERE true  -- an INSERT … SELECT needs a WHERE before ON CONFLICT (SQLite's parser)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING CAST(id AS TEXT) AS id, idempotency_key, queue, run_at_ms
