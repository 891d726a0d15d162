-- Lease up to $4 due runs to worker $1 until $3, counting an attempt, in one statement.
-- $2 is now; $5/$6 restrict queues/names (NULL: any).
-- A run is due when queued or sleeping with run_at <= now, or running with a lapsed lease:
-- the next claim takes it over, so no sweeper is needed. (A running row's run_at is always
-- in the past, which keeps the whole predicate on the one claim_order index.)
-- SKIP LOCKED lets concurrent claimers take disjoint rows instead of queueing on each
-- other's row locks. Paused queues are a hashed NOT IN: the planner then keeps the ordered
-- claim_order scan that stops after $4 rows (`<> ALL (ARRAY(...))` made it estimate one
-- row and sort the whole due backlog instead, 30 ms a claim at 100k due runs).
WITH picked AS (
    SELECT id
    FROM {schema}.jobs
    WHERE state IN ('queued', 'sleeping', 'running')
      AND run_at_ms <= $2
      AND (state <> 'running' OR lease_expires_at_ms <= $2)
      AND queue NOT IN (SELECT queue FROM {schema}.paused_queues)
      AND ($5::text[] IS NULL OR queue = ANY ($5::text[]))
      AND ($6::text[] IS NULL OR name = ANY ($6::text[]))
    ORDER BY priority DESC, run_at_ms, id
    LIMIT $4
    FOR UPDATE SKIP LOCKED
),
claimed AS (
    UPDATE {schema}.jobs AS j
    SET state = 'running',
        attempts = j.attempts + 1,
        locked_by = $1,
        lease_expires_at_ms = $3,
        updated_at_ms = $2
    FROM picked
    WHERE j.id = picked.id
    RETURNING j.*
)
SELECT id::text, name, queue, payload::text, idempotency_key, attempts, max_attempts,
       tenant, actor, concurrency_key, run_at_ms, created_at_ms, lease_expires_at_ms
FROM claimed
ORDER BY claimed.priority DESC, claimed.run_at_ms, claimed.id  -- the bigint, not id::text
