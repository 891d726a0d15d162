-- Record step $4 of run $1 if worker $2 still holds it at $3; answers whether it holds it
-- (a step already recorded is kept: replaying a record is not an error — but a `sleep`
-- record gives way to a `run` record of its name: a step.wait ending with its outcomes).
-- FOR SHARE waits out a concurrent takeover and re-reads the row, so a run reclaimed by
-- another worker mid-statement fails the fence instead of accepting a stale write.
WITH held AS (
    SELECT id
    FROM {schema}.jobs
    WHERE id = $1 AND state = 'running' AND locked_by = $2 AND lease_expires_at_ms > $3
    FOR SHARE
),
recorded AS (
    INSERT INTO {schema}.steps (job_id, name, kind, result, started_at_ms, finished_at_ms, wake_at_ms)
    SELECT id, $4, $5, $6::text::jsonb, $7, $8, $9
    FROM held
    ON CONFLICT (job_id, name) DO UPDATE
    SET kind = excluded.kind, result = excluded.result,
        finished_at_ms = excluded.finished_at_ms, wake_at_ms = excluded.wake_at_ms
    WHERE steps.kind = 'sleep' AND excluded.kind = 'run'
)
SELECT EXISTS (SELECT FROM held)
