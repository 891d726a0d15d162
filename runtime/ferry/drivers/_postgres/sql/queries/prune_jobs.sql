-- Delete up to $2 runs in states $3 finished before $1 (steps cascade); answers how many.
-- SKIP LOCKED keeps two pruners from waiting on each other's batch. A child is kept while
-- its parent has not ended: the parent's step.wait reads its outcome.
WITH doomed AS (
    SELECT id
    FROM {schema}.jobs AS j
    WHERE state = ANY ($3::text[]) AND finished_at_ms < $1
      AND (parent_id IS NULL
           OR NOT EXISTS (SELECT FROM {schema}.jobs AS p
                          WHERE p.id = j.parent_id
                            AND p.state NOT IN ('completed', 'dead', 'cancelled')))
    ORDER BY finished_at_ms
    LIMIT $2
    FOR UPDATE SKIP LOCKED
),
deleted AS (
    DELETE FROM {schema}.jobs AS j USING doomed WHERE j.id = doomed.id RETURNING 1
)
SELECT count(*) FROM deleted
