-- Record a step of run :job_id (its holder was checked under the write lock); a step
-- already recorded is kept: replaying a record is not an error.
INSERT INTO ferry_steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
VALUES (:job_id, :name, :kind, :result, :started_at_ms, :finished_at_ms, :wake_at_ms)
ON CONFLICT (job_id, name) DO NOTHING
