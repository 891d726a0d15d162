-- The worker's round trip: settle a batch of attempts, then lease up to $6 due runs to
-- worker $5 until $7, counting an attempt — one statement, one commit. `settle_many` is
-- this with no claim ($6 = 0), `claim` this with no settles (an empty batch); a worker whose
-- jobs declare concurrency sends settle_and_keyed_claim instead.
-- The settle's parameters ($1..$4) are those of _settle.sql; $8/$9 restrict the claim to
-- queues/names (NULL: any). Two statements, not one with the keyed part unused: even on the
-- generic plan it costs each execution (a settle + a claim of one: 0.67 ms, keyed 0.84-1.31).
WITH {_settle},
became_ready AS (SELECT * FROM requeued),
{_ready},
-- The due ready rows (_due.sql) in claim order. SKIP LOCKED lets concurrent claimers take
-- disjoint rows instead of queueing on each other's row locks. The claim locks the ready
-- row, not the run's: `jobs` is only ever written by primary key.
picked AS (
    SELECT r.tableoid, r.ctid, r.id, r.run_at_ms
    FROM {schema}.ready AS r
    WHERE {_due}
    ORDER BY r.priority DESC, r.run_at_ms, r.id
    LIMIT $6
    FOR UPDATE OF r SKIP LOCKED
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
    {_lease_picked}
    RETURNING j.id, j.name, j.queue, j.payload, j.idempotency_key, j.attempts, j.max_attempts,
              j.tenant, j.actor, j.concurrency_key, j.run_at_ms, j.created_at_ms, j.priority,
              NULL::bigint AS rate_deferred_until_ms, j.traceparent
),
{_dropped},
slots_taken AS (
    SELECT NULL::text AS holder WHERE false  -- this claim takes no slot
)
{_answer}
