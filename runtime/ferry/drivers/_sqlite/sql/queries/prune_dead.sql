-- Delete up to :batch dead runs finished before :before, oldest first
-- (ferry_jobs_dead_order); a row per run deleted.
DELETE FROM ferry_jobs
WHERE id IN (
    SELECT id FROM ferry_jobs
    WHERE state = 'dead' AND finished_at_ms < :before
    ORDER BY finished_at_ms
    LIMIT :batch
)
RETURNING 1
