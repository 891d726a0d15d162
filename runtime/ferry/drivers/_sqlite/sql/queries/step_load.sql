-- The steps of runs :job_ids (a JSON array), each run's in the order they ran (rowid:
-- insertion order within a millisecond).
SELECT CAST(job_id AS TEXT) AS job_id, name, kind, result, started_at_ms, finished_at_ms,
       wake_at_ms
FROM ferry_steps
WHERE job_id IN (SELECT value FROM json_each(:job_ids))
ORDER BY job_id, started_at_ms, rowid
