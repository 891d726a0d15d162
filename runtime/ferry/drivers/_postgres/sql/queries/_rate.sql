-- A fragment settle_and_rated_claim includes after `fresh` (the picked runs still
-- claimable, each with its rate_key and whether it was deferred before, `booked`): the rate
-- limit check, taken in the claim so that a run over its limit is never leased. $10 is the worker's rated jobs
-- as one JSON array of [name, limit, per_ms]. For each key among the picked runs,
-- rate_take (migration 0020) locks the key's window and answers how many start now;
-- `rate_deferred` puts the others back queued, due when their key has room (the run is
-- not leased, so no attempt is counted), and the statement makes them ready at that
-- instant (_ready.sql). `leased` must skip the runs in `rate_deferred`.
rates AS (
    SELECT r ->> 0 AS name, (r ->> 1)::integer AS lim, (r ->> 2)::bigint AS per_ms
    FROM json_array_elements($10::json) AS r
),
rated AS (
    SELECT p.id, p.rate_key AS key, r.lim, r.per_ms, p.booked,
           row_number() OVER (PARTITION BY p.rate_key
                              ORDER BY p.priority DESC, p.run_at_ms, p.id) AS nth
    FROM fresh AS p
    JOIN rates AS r ON r.name = p.name
    WHERE p.rate_key IS NOT NULL
),
-- One call per key, keys in one order for every claimer (two claimers of the same two
-- keys lock them in the same order, so they never wait on each other in a cycle).
rate_decided AS (
    SELECT k.key, t.admitted, t.hints
    FROM (SELECT key, min(lim) AS lim, min(per_ms) AS per_ms,
                 array_agg(booked ORDER BY nth) AS booked
          FROM rated GROUP BY key ORDER BY key) AS k,
         LATERAL {schema}.rate_take(k.key, k.lim, k.per_ms, $2, k.booked) AS t
),
rate_deferred AS (
    UPDATE {schema}.jobs AS j
    SET state = 'queued',
        locked_by = NULL,
        lease_expires_at_ms = NULL,
        run_at_ms = d.hints[r.nth - d.admitted],
        rate_deferred_until_ms = d.hints[r.nth - d.admitted],
        updated_at_ms = $2
    FROM rated AS r
    JOIN rate_decided AS d ON d.key = r.key
    WHERE j.id = r.id AND r.nth > d.admitted AND j.state IN ('queued', 'sleeping')
    RETURNING j.id, j.name, j.queue, 'null'::text AS payload, j.idempotency_key, j.attempts,
              j.max_attempts, j.tenant, j.actor, j.concurrency_key, j.run_at_ms,
              j.created_at_ms, j.priority, j.rate_deferred_until_ms, j.traceparent
)
