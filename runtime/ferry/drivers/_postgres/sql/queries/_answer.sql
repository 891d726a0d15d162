-- A fragment every round trip of the worker ends with (settle_and_claim,
-- settle_and_keyed_claim and settle_and_rated_claim include it): one row per run claimed,
-- in claim order, with only the columns a worker runs it from (the lease's end is the
-- statement's $7, known to the caller; `rate_deferred_until_ms` is set on a run the rated
-- claim deferred instead of leasing), then one last row (`id` NULL) whose `landed` holds
-- the row ids of the settles that landed (one array, not a row per settle) and whose
-- `stale` counts the ready rows the claim dropped without leasing or deferring their run:
-- a short batch with stale rows in it does not mean nothing else is due. Reads `settled`,
-- `notified`, `claimed`, `dropped` and `slots_taken` (the holders whose slot this
-- statement took).
SELECT id, name, queue, payload::text AS payload, idempotency_key, attempts, max_attempts,
       tenant, actor, concurrency_key, run_at_ms, created_at_ms,
       id::text IN (SELECT holder FROM slots_taken) AS slot_held,
       NULL::bigint[] AS landed, NULL::bigint AS stale, priority, rate_deferred_until_ms,
       traceparent
FROM claimed
UNION ALL
SELECT NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL, NULL,
       coalesce((SELECT array_agg(id) FROM settled), '{}'),
       (SELECT count(*) FROM dropped) - (SELECT count(*) FROM claimed), NULL, NULL, NULL
WHERE (SELECT count(*) FROM notified) >= 0  -- reading `notified` is what runs it
ORDER BY priority DESC NULLS LAST, run_at_ms, id  -- the `landed` row (priority NULL) last
