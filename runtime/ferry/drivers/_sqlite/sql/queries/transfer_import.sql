-- Write runs moved from another store (:runs, a JSON array of objects, keys distinct) in
-- the state, attempts, error, instants and progress they carry; :now is now. A key that
-- already has a run is skipped (transfer_existing judges it). Answers the runs it wrote;
-- the caller writes their steps (transfer_import_steps) in the same transaction, so a
-- worker never claims a moved run without the steps it must replay.
INSERT INTO ferry_jobs (
    name, queue, payload, idempotency_key, state, attempts, max_attempts, priority,
    run_at_ms, tenant, actor, concurrency_key, last_error_code, last_error_message,
    progress_current, progress_total, created_at_ms, finished_at_ms, rate_key, updated_at_ms
)
SELECT json_extract(r.value, '$.name'), json_extract(r.value, '$.queue'),
       json_extract(r.value, '$.payload'), json_extract(r.value, '$.idempotency_key'),
       json_extract(r.value, '$.state'), json_extract(r.value, '$.attempts'),
       json_extract(r.value, '$.max_attempts'), json_extract(r.value, '$.priority'),
       json_extract(r.value, '$.run_at_ms'), json_extract(r.value, '$.tenant'),
       json_extract(r.value, '$.actor'), json_extract(r.value, '$.concurrency_key'),
       json_extract(r.value, '$.last_error_code'),
       json_extract(r.value, '$.last_error_message'),
       json_extract(r.value, '$.progress_current'), json_extract(r.value, '$.progress_total'),
       json_extract(r.value, '$.created_at_ms'), json_extract(r.value, '$.finished_at_ms'),
       json_extract(r.value, '$.rate_key'), :now
FROM json_each(:runs) AS r
WHERE true  -- an INSERT … SELECT needs a WHERE before ON CONFLICT (SQLite's parser)
ON CONFLICT (idempotency_key) DO NOTHING
RETURNING CAST(id AS TEXT) AS id, idempotency_key, state, queue, run_at_ms
