-- Record step :name of run :job_id if :worker_id still holds it at :now; answers a row
-- when it holds it (a step already recorded is kept: replaying a record is not an error —
-- but a `sleep` record gives way to a `run` record of its name: a step.wait ending with
-- its outcomes).
-- FOR SHARE waits out a concurrent takeover and re-reads the row, so a run reclaimed by
-- another worker mid-statement fails the fence instead of accepting a stale write.
WITH held AS (
    SELECT id
    FROM {schema}.jobs
    WHERE id = :job_id AND state = 'running' AND locked_by = :worker_id
      AND lease_expires_at_ms > :now
    FOR SHARE
),
recorded AS (
    INSERT INTO {schema}.steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
    SELECT id, :name, :kind, :result::text::jsonb, :started_at_ms, :finished_at_ms, :wake_at_ms
    FROM held
    ON CONFLICT (job_id, name) DO UPDATE
    SET kind = excluded.kind, result = excluded.result,
        finished_at_ms = excluded.finished_at_ms, wake_at_ms = excluded.wake_at_ms
    WHERE steps.kind = 'sleep' AND excluded.kind = 'run'
)
SELECT true AS held FROM held
