-- Delete up to :batch completed or cancelled runs finished before :before, oldest first
-- (jobs_prune_order; steps cascade); a row per run deleted.
-- SKIP LOCKED keeps two pruners from waiting on each other's batch. A child is kept while
-- its parent has not ended (_parent_ended.sql).
WITH doomed AS (
    SELECT id
    FROM {schema}.jobs AS j
    WHERE state IN ('completed', 'cancelled') AND finished_at_ms < :before
      AND {_parent_ended}
    ORDER BY finished_at_ms
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
