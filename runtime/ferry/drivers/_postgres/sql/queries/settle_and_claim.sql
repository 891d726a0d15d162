-- The worker's round trip: settle a batch of attempts, then lease up to $17 due runs to
-- worker $16 until $18, counting an attempt — one statement, one commit. `settle_many` is
-- this with no claim ($17 = 0), `claim` this with no settles (empty arrays); a worker whose
-- jobs declare concurrency sends settle_and_keyed_claim instead.
-- The settle's parameters ($1..$15) are those of _settle.sql; $19/$20 restrict the claim to
-- queues/names (NULL: any). Two statements rather than one with the keyed part unused:
-- the server plans the statement on every execution, and the keyed part doubles that cost.
WITH {_settle},
-- A run is due when queued or sleeping with run_at <= now, or running with a lapsed lease:
-- the next claim takes it over, so no sweeper is needed. (A running row's run_at is always
-- in the past, which keeps the whole predicate on the one claim_order index.)
-- SKIP LOCKED lets concurrent claimers take disjoint rows instead of queueing on each
-- other's row locks. Paused queues are a hashed NOT IN: the planner then keeps the ordered
-- claim_order scan that stops after $17 rows (`<> ALL (ARRAY(...))` made it estimate one
-- row and sort the whole due backlog instead, 30 ms a claim at 100k due runs).
picked AS (
    SELECT j.id
    FROM {schema}.jobs AS j
    WHERE j.state IN ('queued', 'sleeping', 'running')
      AND j.run_at_ms <= $13
      AND (j.state <> 'running' OR j.lease_expires_at_ms <= $13)
      AND j.queue NOT IN (SELECT queue FROM {schema}.paused_queues)
      AND ($19::text[] IS NULL OR j.queue = ANY ($19::text[]))
      AND ($20::text[] IS NULL OR j.name = ANY ($20::text[]))
    ORDER BY j.priority DESC, j.run_at_ms, j.id
    LIMIT $17
    FOR UPDATE OF j SKIP LOCKED
),
-- The settled runs' slots (caps, or a key taken by a claim without limits) go in the
-- statement that settles them: a crash between two statements can never leave a settled
-- run holding a slot until its TTL.
released AS (
    DELETE FROM {schema}.lease_slots AS s
    USING settled
    WHERE s.holder = settled.holder
),
claimed AS (
    UPDATE {schema}.jobs AS j
    SET state = 'running',
        attempts = j.attempts + 1,
        locked_by = $16,
        lease_expires_at_ms = $18,
        updated_at_ms = $13
    FROM picked
    WHERE j.id = picked.id
    RETURNING j.*
),
slots_taken AS (
    SELECT NULL::text AS holder WHERE false  -- this claim takes no slot
)
{_answer}
