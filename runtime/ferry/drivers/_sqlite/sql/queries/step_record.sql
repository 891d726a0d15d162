-- Record step :name of run :job_id if :worker_id still holds it at :now; answers a row
-- when it holds it. A step already recorded is kept (replaying a record is not an error) —
-- but a `sleep` record gives way to a `run` record of its name (a step.wait ending with its
-- outcomes). The conflict's update otherwise sets what was there, so the holder still
-- gets its row.
INSERT INTO ferry_steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
SELECT id, :name, :kind, :result, :started_at_ms, :finished_at_ms, :wake_at_ms
FROM ferry_jobs
WHERE id = :job_id AND state = 'running' AND locked_by = :worker_id
  AND lease_expires_at_ms > :now
ON CONFLICT (job_id, name) DO UPDATE
SET (kind, result, finished_at_ms, wake_at_ms) = (
    SELECT excluded.kind, excluded.result, excluded.finished_at_ms, excluded.wake_at_ms
    WHERE ferry_steps.kind = 'sleep' AND excluded.kind = 'run'
    UNION ALL
    SELECT ferry_steps.kind, ferry_steps.result, ferry_steps.finished_at_ms,
           ferry_steps.wake_at_ms
    WHERE NOT (ferry_steps.kind = 'sleep' AND excluded.kind = 'run')
)
RETURNING 1 AS held
