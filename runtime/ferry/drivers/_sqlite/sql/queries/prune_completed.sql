-- Delete up to :batch completed or cancelled runs finished before :before, oldest first
-- (ferry_jobs_prune_order); their steps go with them (ON DELETE CASCADE); a row per run
-- deleted. A child is kept while its parent has not ended (_parent_ended.sql).
DELETE FROM ferry_jobs
WHERE id IN (
    SELECT id FROM ferry_jobs AS j
    WHERE state IN ('completed', 'cancelled') AND finished_at_ms < :before
      AND {_parent_ended}
    ORDER BY finished_at_ms
    LIMIT :batch
)
RETURNING 1
