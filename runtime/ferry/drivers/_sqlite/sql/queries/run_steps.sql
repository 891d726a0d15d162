-- The steps of run :id in the order they ran (rowid: insertion order within a millisecond).
SELECT name, kind, result, started_at_ms, finished_at_ms, wake_at_ms
FROM ferry_steps
WHERE job_id = :id
ORDER BY started_at_ms, rowid
