-- Write the steps of runs transfer_import just wrote (:steps, a JSON array of objects, each
-- naming its run by job_id, its result as JSON text), in the order they ran (steps.seq
-- follows the insertion order).
INSERT INTO {schema}.steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
SELECT s.job_id, s.name, s.kind, s.result::jsonb, s.started_at_ms, s.finished_at_ms, s.wake_at_ms
FROM ROWS FROM (jsonb_to_recordset(:steps::text::jsonb) AS (
    job_id bigint, name text, kind text, result text, started_at_ms bigint,
    finished_at_ms bigint, wake_at_ms bigint
)) WITH ORDINALITY AS s(job_id, name, kind, result, started_at_ms, finished_at_ms,
                        wake_at_ms, ord)
ORDER BY s.ord
