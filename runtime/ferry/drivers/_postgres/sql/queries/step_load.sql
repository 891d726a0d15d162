-- Every step run $1 has recorded.
SELECT name, kind, result::text, started_at_ms, finished_at_ms, wake_at_ms
FROM {schema}.steps
WHERE job_id = $1
