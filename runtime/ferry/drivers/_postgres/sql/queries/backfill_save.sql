-- Save the checkpoint of backfill $4 if worker $2 still holds run $1 at $3; answers
-- whether it holds it. Fenced like step_record (FOR SHARE waits out a takeover), so a
-- worker that lost its lease can never move a checkpoint its successor already moved.
WITH held AS (
    SELECT id
    FROM {schema}.jobs
    WHERE id = $1 AND state = 'running' AND locked_by = $2 AND lease_expires_at_ms > $3
    FOR SHARE
),
saved AS (
    INSERT INTO {schema}.backfills (key, cursor, processed, pages, done, job_id, updated_at_ms)
    SELECT $4, $5::text::jsonb, $6, $7, $8, id, $3
    FROM held
    ON CONFLICT (key) DO UPDATE
    SET cursor = excluded.cursor, processed = excluded.processed, pages = excluded.pages,
        done = excluded.done, job_id = excluded.job_id, updated_at_ms = excluded.updated_at_ms
)
SELECT EXISTS (SELECT FROM held)
