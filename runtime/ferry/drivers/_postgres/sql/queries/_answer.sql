-- A fragment both round trips of the worker end with (settle_and_claim and
-- settle_and_keyed_claim include it): one row per settle that landed (`claimed` false:
-- only `pk`, the row id, and `id`, the run id) and one per run claimed (`claimed` true),
-- the claimed ones in claim order.
-- Reads `settled`, `notified`, `claimed` and `slots_taken` (the holders whose slot this
-- statement took).
SELECT false AS claimed, id AS pk, id::text AS id, NULL AS name, NULL AS queue,
       NULL AS payload, NULL AS idempotency_key, NULL::integer AS attempts,
       NULL::integer AS max_attempts, NULL AS tenant, NULL AS actor,
       NULL AS concurrency_key, NULL::bigint AS run_at_ms, NULL::bigint AS created_at_ms,
       NULL::bigint AS lease_expires_at_ms, NULL::boolean AS slot_held, NULL::integer AS priority,
       (SELECT count(*) FROM notified) AS notified,  -- reading `notified` is what runs it
       NULL AS traceparent
FROM settled
UNION ALL
SELECT true, id, id::text, name, queue, payload::text, idempotency_key, attempts,
       max_attempts, tenant, actor, concurrency_key, run_at_ms, created_at_ms,
       lease_expires_at_ms, id::text IN (SELECT holder FROM slots_taken), priority, 0,
       traceparent
FROM claimed
ORDER BY claimed, priority DESC, run_at_ms, pk  -- the bigint, not id::text
