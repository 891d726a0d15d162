-- Delete up to :batch dead runs finished before :before, oldest first (ferry_jobs_dead_order);
-- a child is kept while its parent has not ended (its step.wait reads the outcome).
DELETE FROM ferry_jobs
WHERE id IN (
    SELECT id FROM ferry_jobs
    WHERE state = 'dead' AND finished_at_ms < :before
      AND (parent_id IS NULL
           OR NOT EXISTS (SELECT 1 FROM ferry_jobs AS p
                          WHERE p.id = ferry_jobs.parent_id
                            AND p.state NOT IN ('completed', 'dead', 'cancelled')))
    ORDER BY finished_at_ms
    LIMIT :batch
)
