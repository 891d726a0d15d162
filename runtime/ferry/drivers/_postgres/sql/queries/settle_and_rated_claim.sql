-- The round trip of a worker running jobs that declare a rate limit: like settle_and_claim,
-- and the claim applies each rated run's limit (_rate.sql) — the runs whose key has room
-- are leased, the others deferred to when it has room and answered with their new due
-- instant in `rate_deferred_until_ms` (not leased, not to be run). $1..$9 as in
-- settle_and_claim, $10 the rated jobs (_rate.sql). Keyed concurrency is not taken in this
-- claim (a worker running rated jobs sends this one whatever its `limits`): a keyed run
-- takes its slot when it starts (ClaimedJob.slot_held false), as on a driver without the
-- keyed claim.
WITH {_settle},
-- The due ready rows in claim order, as settle_and_claim picks them.
picked AS (
    SELECT r.tableoid, r.ctid, r.id, r.name, r.priority, r.run_at_ms
    FROM {schema}.ready AS r
    WHERE {_due}
    ORDER BY r.priority DESC, r.run_at_ms, r.id
    LIMIT $6
    FOR UPDATE OF r SKIP LOCKED
),
-- The picked rows whose run `jobs` still has claimable at their instant, with what the
-- rate check reads: a stale row must not count a start against its key.
fresh AS (
    SELECT p.id, p.name, p.priority, p.run_at_ms, j.rate_key,
           j.rate_deferred_until_ms IS NOT NULL AS booked
    FROM picked AS p
    JOIN {schema}.jobs AS j ON j.id = p.id
    WHERE j.state IN ('queued', 'sleeping') AND j.run_at_ms = p.run_at_ms
),
{_rate},
became_ready AS (
    SELECT * FROM requeued
    UNION ALL
    SELECT id, priority, run_at_ms, queue, name, concurrency_key, $2::bigint
    FROM rate_deferred
),
{_ready},
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
{_dropped},
slots_taken AS (
    SELECT NULL::text AS holder WHERE false  -- this claim takes no slot
)
{_answer}
