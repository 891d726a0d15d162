-- The round trip of a worker running jobs that declare a rate limit: like settle_and_claim,
-- and the claim applies each rated run's limit (_rate.sql) — the runs whose key has room
-- are leased, the others deferred to when it has room and answered with their new due
-- instant in `rate_deferred_until_ms` (not leased, not to be run). $1..$9 as in
-- settle_and_claim, $10 the rated jobs (_rate.sql). Keyed concurrency is not taken in this
-- claim (a worker running rated jobs sends this one whatever its `limits`): a keyed run
-- takes its slot when it starts (ClaimedJob.slot_held false), as on a driver without the
-- keyed claim.
WITH {_settle},
picked AS (
    SELECT j.id, j.name, j.rate_key, j.rate_deferred_until_ms IS NOT NULL AS booked,
           j.priority, j.run_at_ms
    FROM {schema}.jobs AS j
    WHERE {_due}
    ORDER BY j.priority DESC, j.run_at_ms, j.id
    LIMIT $6
    FOR UPDATE OF j SKIP LOCKED
),
{_rate},
released AS (
    DELETE FROM {schema}.lease_slots AS s
    USING settled
    WHERE s.holder = settled.holder
),
leased AS (
    {_lease_picked}
      AND picked.id NOT IN (SELECT id FROM rate_deferred)
    RETURNING j.id, j.name, j.queue, j.payload::text AS payload, j.idempotency_key,
              j.attempts, j.max_attempts, j.tenant, j.actor, j.concurrency_key, j.run_at_ms,
              j.created_at_ms, j.priority, NULL::bigint AS rate_deferred_until_ms, j.traceparent
),
claimed AS (
    SELECT * FROM leased
    UNION ALL
    SELECT * FROM rate_deferred
),
slots_taken AS (
    SELECT NULL::text AS holder WHERE false  -- this claim takes no slot
)
{_answer}
