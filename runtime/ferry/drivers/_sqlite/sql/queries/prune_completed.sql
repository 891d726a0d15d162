-- Delete up to :batch completed or cancelled runs finished before :before, oldest first
-- (ferry_jobs_prune_order); their steps go with them (ON DELETE CASCADE). A child is kept
-- while its parent has not ended: the parent's step.wait reads its outcome.
DELETE FROM ferry_jobs
WHERE id IN (
    SELECT id FROM ferry_jobs
    WHERE state IN ('completed', 'cancelled') AND finished_at_ms < :before
      AND (parent_id IS NULL
           OR NOT EXISTS (SELECT 1 FROM ferry_jobs AS p
                          WHERE p.id = ferry_jobs.parent_id
                            AND p.state NOT IN ('completed', 'dead', 'cancelled')))
    ORDER BY finished_at_ms
    LIMIT :batch
)
