-- The round trip of a worker running jobs that declare concurrency: like settle_and_claim,
-- and the claim also takes each keyed run's concurrency slot, skipping runs whose key is
-- full. $1..$9 as in settle_and_claim; $10/$11 are parallel arrays: job name, its
-- fleet-wide limit per concurrency key.
--
-- Every part of one statement reads the same snapshot, so the claim cannot see what the
-- settle writes: a run settled here still reads as running under its lease (never due —
-- the fence and the due test exclude each other), and its slots still read as held.
-- The claim therefore discounts those slots itself and hands them straight to the runs it
-- claims, which is how a limit-1 key runs its next job in the round trip that settles the
-- previous one.
WITH {_settle},
became_ready AS (SELECT * FROM requeued),
{_ready},
limits AS (
    SELECT * FROM unnest($10::text[], $11::integer[]) AS l(name, lim)
),
-- Keys (with the job they count for) whose live slots already reach the limit, counting
-- neither expired slots nor those of runs settled above. Computed once, so each candidate
-- row costs one hash probe whatever plan the claim gets.
full_keys AS (
    SELECT l.name, s.key
    FROM {schema}.lease_slots AS s
    JOIN limits AS l ON s.key = l.name OR starts_with(s.key, l.name || ':')
    WHERE s.expires_at_ms > $2 AND s.holder NOT IN (SELECT holder FROM settled)
    GROUP BY l.name, s.key, l.lim
    HAVING count(*) >= l.lim
),
-- The due ready rows (_due.sql) in claim order; SKIP LOCKED lets concurrent claimers take
-- disjoint rows instead of queueing on each other's row locks. Claiming a run of a full
-- key only to defer it would make a limit-1 key crawl at the retry interval; skipping it
-- here lets the next run start the moment the holder settles.
picked AS (
    SELECT r.tableoid, r.ctid, r.id, r.name, r.concurrency_key AS key, r.priority, r.run_at_ms
    FROM {schema}.ready AS r
    WHERE {_due}
      AND (r.concurrency_key IS NULL
           OR (r.name, r.concurrency_key) NOT IN (SELECT name, key FROM full_keys))
    ORDER BY r.priority DESC, r.run_at_ms, r.id
    LIMIT $6
    FOR UPDATE OF r SKIP LOCKED
),
-- The picked rows whose run `jobs` still has claimable at their instant: only these may
-- take a slot (a stale row's would be held for nothing until its TTL). The lease below
-- tests the run again on its newest version.
fresh AS (
    SELECT p.id
    FROM picked AS p
    JOIN {schema}.jobs AS j ON j.id = p.id
    WHERE j.state IN ('queued', 'sleeping') AND j.run_at_ms = p.run_at_ms
),
-- Within the batch, the n-th picked run of a key gets the n-th free slot of that key, and
-- only as many runs as the key has room for (live holders above a lowered limit count).
keyed AS (
    SELECT p.id, p.key, l.lim,
           row_number() OVER (PARTITION BY p.key ORDER BY p.priority DESC, p.run_at_ms, p.id)
               AS nth,
           l.lim - (SELECT count(*) FROM {schema}.lease_slots AS s
                    WHERE s.key = p.key AND s.expires_at_ms > $2
                      AND s.holder NOT IN (SELECT holder FROM settled)) AS room
    FROM picked AS p
    JOIN limits AS l ON l.name = p.name
    WHERE p.key IS NOT NULL AND p.id IN (SELECT id FROM fresh)
),
free AS (
    SELECT k.key, n AS slot, row_number() OVER (PARTITION BY k.key ORDER BY n) AS nth
    FROM (SELECT DISTINCT key, lim FROM keyed) AS k,
         generate_series(0, k.lim - 1) AS n
    WHERE NOT EXISTS (SELECT FROM {schema}.lease_slots AS s
                      WHERE s.key = k.key AND s.slot = n AND s.expires_at_ms > $2
                        AND s.holder NOT IN (SELECT holder FROM settled))
),
-- A slot is free when nobody holds it, when its holder's lease lapsed, or when its holder
-- is settled above: then the row is handed over here instead of deleted below. A
-- concurrent claimer that took the same slot first wins: our INSERT waits for its commit,
-- conflicts, finds a live holder, and that run stays queued.
taken AS (
    INSERT INTO {schema}.lease_slots AS s (key, slot, holder, expires_at_ms)
    SELECT k.key, f.slot, k.id::text, $7
    FROM keyed AS k
    JOIN free AS f ON f.key = k.key AND f.nth = k.nth
    WHERE k.nth <= k.room
    ON CONFLICT (key, slot) DO UPDATE
    SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms
    WHERE s.expires_at_ms <= $2 OR s.holder IN (SELECT holder FROM settled)
    RETURNING s.key, s.slot, s.holder
),
-- The settled runs' slots (concurrency key and caps) go in the statement that settles
-- them, except those just handed over: a crash between two statements can never leave a
-- settled run holding a slot until its TTL. Each slot row is written by one part only.
slots_taken AS (
    SELECT holder FROM taken
),
released AS (
    DELETE FROM {schema}.lease_slots AS s
    USING settled
    WHERE s.holder = settled.holder
      AND NOT EXISTS (SELECT FROM taken AS t WHERE t.key = s.key AND t.slot = s.slot)
),
claimed AS (
    {_lease_picked}
      AND picked.id IN (SELECT id FROM fresh)
      AND (picked.id NOT IN (SELECT id FROM keyed)
           OR picked.id::text IN (SELECT holder FROM taken))
    RETURNING j.id, j.name, j.queue, j.payload, j.idempotency_key, j.attempts, j.max_attempts,
              j.tenant, j.actor, j.concurrency_key, j.run_at_ms, j.created_at_ms, j.priority,
              NULL::bigint AS rate_deferred_until_ms, j.traceparent
),
-- A picked row leaves the ready set when its run is leased above or when it was stale; a
-- run left waiting for its key's slot keeps its row. Found by its ctid, as in _dropped.sql.
dropped AS (
    DELETE FROM {schema}.ready AS r
    WHERE r.part < 2
      AND r.ctid = ANY (ARRAY(SELECT ctid FROM picked))
      AND (r.tableoid, r.ctid) IN (
          SELECT tableoid, ctid FROM picked
          WHERE id IN (SELECT id FROM claimed) OR id NOT IN (SELECT id FROM fresh))
    RETURNING r.id
)
{_answer}
