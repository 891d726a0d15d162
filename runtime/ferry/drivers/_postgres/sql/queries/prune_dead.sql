-- Delete up to :batch dead runs finished before :before, oldest first (jobs_dead_order;
-- steps cascade, SKIP LOCKED as in prune_completed); a row per run deleted. A child is
-- kept while its parent has not ended (_parent_ended.sql).
WITH doomed AS (
    SELECT id
    FROM {schema}.jobs AS j
    WHERE state = 'dead' AND finished_at_ms < :before
      AND {_parent_ended}
    ORDER BY finished_at_ms
    LIMIT :batch
    FOR UPDATE SKIP LOCKED
)
DELETE FROM {schema}.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
