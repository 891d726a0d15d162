-- Record a step of run :job_id (its holder was checked under the write lock); a step
-- already recorded is kept: replaying a record is not an error — but a `sleep` record gives
-- way to a `run` record of its name (a step.wait ending with its outcomes).
INSERT INTO ferry_steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
VALUES (:job_id, :name, :kind, :result, :started_at_ms, :finished_at_ms, :wake_at_ms)
ON CONFLICT (job_id, name) DO UPDATE
SET kind = excluded.kind, result = excluded.result, finished_at_ms = excluded.finished_at_ms,
    wake_at_ms = excluded.wake_at_ms
WHERE ferry_steps.kind = 'sleep' AND excluded.kind = 'run'
