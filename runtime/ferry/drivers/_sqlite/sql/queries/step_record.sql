-- Record step :name of run :job_id if :worker_id still holds it at :now; answers a row
-- when it holds it. A step already recorded is kept (replaying a record is not an error):
-- the conflict's update sets nothing new, and is there so the holder still gets its row.
INSERT INTO ferry_steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
SELECT id, :name, :kind, :result, :started_at_ms, :finished_at_ms, :wake_at_ms
FROM ferry_jobs
WHERE id = :job_id AND state = 'running' AND locked_by = :worker_id
  AND lease_expires_at_ms > :now
ON CONFLICT (job_id, name) DO UPDATE SET name = excluded.name
RETURNING 1 AS held
