-- Every step run :job_id has recorded.
SELECT name, kind, result, started_at_ms, finished_at_ms, wake_at_ms
FROM ferry_steps
WHERE job_id = :job_id
