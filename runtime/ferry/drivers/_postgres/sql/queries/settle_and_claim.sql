-- The worker's round trip: settle a batch of attempts, then lease up to $17 due runs to
-- worker $16 until $18, counting an attempt — one statement, one commit. `settle_many`
-- is this with no claim ($17 = 0), `claim` this with no settles (empty arrays).
--
-- $1..$12 are parallel arrays, one element per settle (runs distinct); $13 is now;
-- $14/$15 the error a cancel override leaves. $19/$20 restrict queues/names (NULL: any);
-- $21/$22 are parallel arrays: job name, its fleet-wide limit per concurrency key.
-- Answers one row per settle that landed (`claimed` false: only `id`) and one per run
-- claimed (`claimed` true), the claimed ones in claim order.
--
-- Every part of one statement reads the same snapshot, so the claim cannot see what the
-- settle writes: a run settled here still reads as running under its lease (never due —
-- the fence and the due test exclude each other), and its slots still read as held.
-- The claim therefore discounts those slots itself and hands them straight to the runs it
-- claims, which is how a limit-1 key runs its next job in the round trip that settles the
-- previous one.
WITH requests AS (
    SELECT *
    FROM unnest(
        $1::bigint[], $2::text[], $3::text[], $4::integer[], $5::boolean[], $6::boolean[],
        $7::bigint[], $8::text[], $9::text[], $10::text[], $11::bigint[], $12::bigint[]
    ) AS r(
        id, worker_id, state, attempts_given_back, requeues, finishes,
        run_at_ms, result, error_code, error_message, progress_current, progress_total
    )
),
-- The rules are ferry.drivers.settle's: the caller passes each settle's planned state,
-- whether it gives the attempt back, whether it requeues and whether it finishes the run.
-- Each settle is fenced on its claimer: it lands only while that worker holds an
-- unexpired lease, so a worker whose run was taken over changes nothing. The cancel
-- override (settle.with_cancel_request): a run an operator asked to cancel while it ran
-- never goes back to the queue. Each test reads `j`, the locked row, so a cancel
-- committed while this statement waited for the row counts.
settled AS (
    UPDATE {schema}.jobs AS j
    SET state = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                     THEN 'cancelled' ELSE r.state END,
        attempts = j.attempts - r.attempts_given_back,
        -- A run the settle ends keeps the instant it last became due (its latency).
        run_at_ms = CASE WHEN r.finishes
                              OR (j.cancel_requested_at_ms IS NOT NULL AND r.requeues)
                         THEN j.run_at_ms ELSE coalesce(r.run_at_ms, j.run_at_ms) END,
        result = CASE WHEN r.state = 'completed' THEN r.result::jsonb ELSE j.result END,
        last_error_code = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                               THEN $14 ELSE coalesce(r.error_code, j.last_error_code) END,
        last_error_message = CASE WHEN j.cancel_requested_at_ms IS NOT NULL AND r.requeues
                                  THEN $15
                                  WHEN r.error_code IS NULL THEN j.last_error_message
                                  ELSE r.error_message END,
        progress_current = coalesce(r.progress_current, j.progress_current),
        progress_total = coalesce(r.progress_total, j.progress_total),
        finished_at_ms = CASE WHEN r.finishes
                                   OR (j.cancel_requested_at_ms IS NOT NULL AND r.requeues)
                              THEN $13 ELSE j.finished_at_ms END,
        locked_by = NULL,
        lease_expires_at_ms = NULL,
        updated_at_ms = $13
    FROM requests AS r
    WHERE j.id = r.id
      AND j.state = 'running'
      AND j.locked_by = r.worker_id
      AND j.lease_expires_at_ms > $13
    RETURNING j.id, j.id::text AS holder, j.queue, j.state, j.run_at_ms
),
-- A run put straight back (interrupted by a drain, retried at once) wakes idle workers.
notified AS (
    SELECT pg_notify({channel}, due.queue)
    FROM (SELECT DISTINCT queue FROM settled WHERE state = 'queued' AND run_at_ms <= $13) AS due
),
limits AS (
    SELECT * FROM unnest($21::text[], $22::integer[]) AS l(name, lim)
),
-- Keys (with the job they count for) whose live slots already reach the limit, counting
-- neither expired slots nor those of runs settled above. Computed once, so each candidate
-- row costs one hash probe whatever plan the claim gets.
full_keys AS (
    SELECT l.name, s.key
    FROM {schema}.lease_slots AS s
    JOIN limits AS l ON s.key = l.name OR starts_with(s.key, l.name || ':')
    WHERE s.expires_at_ms > $13 AND s.holder NOT IN (SELECT holder FROM settled)
    GROUP BY l.name, s.key, l.lim
    HAVING count(*) >= l.lim
),
-- A run is due when queued or sleeping with run_at <= now, or running with a lapsed lease:
-- the next claim takes it over, so no sweeper is needed. (A running row's run_at is always
-- in the past, which keeps the whole predicate on the one claim_order index.)
-- SKIP LOCKED lets concurrent claimers take disjoint rows instead of queueing on each
-- other's row locks. Paused queues are a hashed NOT IN: the planner then keeps the ordered
-- claim_order scan that stops after $17 rows (`<> ALL (ARRAY(...))` made it estimate one
-- row and sort the whole due backlog instead, 30 ms a claim at 100k due runs).
-- Claiming a run of a full key only to defer it would make a limit-1 key crawl at the
-- retry interval; skipping it here lets the next run start the moment the holder settles.
picked AS (
    SELECT j.id, j.name, j.concurrency_key AS key, j.priority, j.run_at_ms
    FROM {schema}.jobs AS j
    WHERE j.state IN ('queued', 'sleeping', 'running')
      AND j.run_at_ms <= $13
      AND (j.state <> 'running' OR j.lease_expires_at_ms <= $13)
      AND j.queue NOT IN (SELECT queue FROM {schema}.paused_queues)
      AND ($19::text[] IS NULL OR j.queue = ANY ($19::text[]))
      AND ($20::text[] IS NULL OR j.name = ANY ($20::text[]))
      AND (j.concurrency_key IS NULL
           OR (j.name, j.concurrency_key) NOT IN (SELECT name, key FROM full_keys))
    ORDER BY j.priority DESC, j.run_at_ms, j.id
    LIMIT $17
    FOR UPDATE OF j SKIP LOCKED
),
-- Within the batch, the n-th picked run of a key gets the n-th free slot of that key, and
-- only as many runs as the key has room for (live holders above a lowered limit count).
keyed AS (
    SELECT p.id, p.key, l.lim,
           row_number() OVER (PARTITION BY p.key ORDER BY p.priority DESC, p.run_at_ms, p.id)
               AS nth,
           l.lim - (SELECT count(*) FROM {schema}.lease_slots AS s
                    WHERE s.key = p.key AND s.expires_at_ms > $13
                      AND s.holder NOT IN (SELECT holder FROM settled)) AS room
    FROM picked AS p
    JOIN limits AS l ON l.name = p.name
    WHERE p.key IS NOT NULL
),
free AS (
    SELECT k.key, n AS slot, row_number() OVER (PARTITION BY k.key ORDER BY n) AS nth
    FROM (SELECT DISTINCT key, lim FROM keyed) AS k,
         generate_series(0, k.lim - 1) AS n
    WHERE NOT EXISTS (SELECT FROM {schema}.lease_slots AS s
                      WHERE s.key = k.key AND s.slot = n AND s.expires_at_ms > $13
                        AND s.holder NOT IN (SELECT holder FROM settled))
),
-- A slot is free when nobody holds it, when its holder's lease lapsed, or when its holder
-- is settled above: then the row is handed over here instead of deleted below. A
-- concurrent claimer that took the same slot first wins: our INSERT waits for its commit,
-- conflicts, finds a live holder, and that run stays queued.
taken AS (
    INSERT INTO {schema}.lease_slots AS s (key, slot, holder, expires_at_ms)
    SELECT k.key, f.slot, k.id::text, $18
    FROM keyed AS k
    JOIN free AS f ON f.key = k.key AND f.nth = k.nth
    WHERE k.nth <= k.room
    ON CONFLICT (key, slot) DO UPDATE
    SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms
    WHERE s.expires_at_ms <= $13 OR s.holder IN (SELECT holder FROM settled)
    RETURNING s.key, s.slot, s.holder
),
-- The settled runs' slots (concurrency key and caps) go in the statement that settles
-- them, except those just handed over: a crash between two statements can never leave a
-- settled run holding a slot until its TTL. Each slot row is written by one part only.
released AS (
    DELETE FROM {schema}.lease_slots AS s
    USING settled
    WHERE s.holder = settled.holder
      AND NOT EXISTS (SELECT FROM taken AS t WHERE t.key = s.key AND t.slot = s.slot)
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
      AND (picked.id NOT IN (SELECT id FROM keyed)
           OR picked.id::text IN (SELECT holder FROM taken))
    RETURNING j.*
)
SELECT false AS claimed, id AS pk, id::text AS id, NULL AS name, NULL AS queue, NULL AS payload,
       NULL AS idempotency_key, NULL::integer AS attempts, NULL::integer AS max_attempts,
       NULL AS tenant, NULL AS actor, NULL AS concurrency_key, NULL::bigint AS run_at_ms,
       NULL::bigint AS created_at_ms, NULL::bigint AS lease_expires_at_ms,
       NULL::boolean AS slot_held, NULL::integer AS priority,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM settled
UNION ALL
SELECT true, id, id::text, name, queue, payload::text, idempotency_key, attempts, max_attempts,
       tenant, actor, concurrency_key, run_at_ms, created_at_ms, lease_expires_at_ms,
       id::text IN (SELECT holder FROM taken), priority, 0
FROM claimed
ORDER BY claimed, priority DESC, run_at_ms, pk  -- the bigint, not id::text
