-- Save the checkpoint of backfill :key for run :job_id (its holder was checked under the
-- write lock, so a worker that lost its lease cannot rewind what its successor saved).
INSERT INTO ferry_backfills (key, cursor, processed, pages, done, job_id, updated_at_ms)
VALUES (:key, :cursor, :processed, :pages, :done, :job_id, :updated_at_ms)
ON CONFLICT (key) DO UPDATE
SET cursor = excluded.cursor, processed = excluded.processed, pages = excluded.pages,
    done = excluded.done, job_id = excluded.job_id, updated_at_ms = excluded.updated_at_ms
