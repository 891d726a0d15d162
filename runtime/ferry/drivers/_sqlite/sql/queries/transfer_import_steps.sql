-- Write the steps of runs transfer_import just wrote (:steps, a JSON array of objects, each
-- naming its run by job_id, its result as JSON text), in the order they ran (rowid follows
-- the insertion order).
INSERT INTO ferry_steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
SELECT json_extract(s.value, '$.job_id'), json_extract(s.value, '$.name'),
       json_extract(s.value, '$.kind'), json_extract(s.value, '$.result'),
       json_extract(s.value, '$.started_at_ms'), json_extract(s.value, '$.finished_at_ms'),
       json_extract(s.value, '$.wake_at_ms')
FROM json_each(:steps) AS s
ORDER BY s.key
