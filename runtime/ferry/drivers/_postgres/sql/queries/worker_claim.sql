-- The claim of a worker running jobs that declare concurrency: like `claim`, and it also
-- takes each keyed run's concurrency slot in the same statement, skipping runs whose key
-- is full. $1..$6 as in `claim`; $7/$8 are parallel arrays: job name, its limit.
-- Claiming a run of a full key only to defer it makes a limit-1 key crawl at the retry
-- interval; skipping it here lets the next run start the moment the holder settles (the
-- settle deletes the slot in its own statement).
WITH limits AS (
    SELECT * FROM unnest($7::text[], $8::integer[]) AS l(name, lim)
),
-- Keys (with the job they count for) whose live slots already reach the limit. Computed
-- once, so each candidate row costs one hash probe whatever plan the claim gets.
full_keys AS (
    SELECT l.name, s.key
    FROM {schema}.lease_slots AS s
    JOIN limits AS l ON s.key = l.name OR starts_with(s.key, l.name || ':')
    WHERE s.expires_at_ms > $2
    GROUP BY l.name, s.key, l.lim
    HAVING count(*) >= l.lim
),
picked AS (
    SELECT j.id, j.name, j.concurrency_key AS key, j.priority, j.run_at_ms
    FROM {schema}.jobs AS j
    WHERE j.state IN ('queued', 'sleeping', 'running')
      AND j.run_at_ms <= $2
      AND (j.state <> 'running' OR j.lease_expires_at_ms <= $2)
      AND j.queue NOT IN (SELECT queue FROM {schema}.paused_queues)
      AND ($5::text[] IS NULL OR j.queue = ANY ($5::text[]))
      AND ($6::text[] IS NULL OR j.name = ANY ($6::text[]))
      AND (j.concurrency_key IS NULL
           OR (j.name, j.concurrency_key) NOT IN (SELECT name, key FROM full_keys))
    ORDER BY j.priority DESC, j.run_at_ms, j.id
    LIMIT $4
    FOR UPDATE OF j SKIP LOCKED
),
-- Within the batch, the n-th picked run of a key gets the n-th free slot of that key, and
-- only as many runs as the key has room for (live holders above a lowered limit count).
keyed AS (
    SELECT p.id, p.key, l.lim,
           row_number() OVER (PARTITION BY p.key ORDER BY p.priority DESC, p.run_at_ms, p.id)
               AS nth,
           l.lim - (SELECT count(*) FROM {schema}.lease_slots AS s
                    WHERE s.key = p.key AND s.expires_at_ms > $2) AS room
    FROM picked AS p
    JOIN limits AS l ON l.name = p.name
    WHERE p.key IS NOT NULL
),
free AS (
    SELECT k.key, n AS slot, row_number() OVER (PARTITION BY k.key ORDER BY n) AS nth
    FROM (SELECT DISTINCT key, lim FROM keyed) AS k,
         generate_series(0, k.lim - 1) AS n
    WHERE NOT EXISTS (SELECT FROM {schema}.lease_slots AS s
                      WHERE s.key = k.key AND s.slot = n AND s.expires_at_ms > $2)
),
-- A concurrent claimer that took the same slot first wins: our INSERT waits for its
-- commit, conflicts, and replaces only an expired holder, so that run stays queued.
taken AS (
    INSERT INTO {schema}.lease_slots AS s (key, slot, holder, expires_at_ms)
    SELECT k.key, f.slot, k.id::text, $3
    FROM keyed AS k
    JOIN free AS f ON f.key = k.key AND f.nth = k.nth
    WHERE k.nth <= k.room
    ON CONFLICT (key, slot) DO UPDATE
    SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms
    WHERE s.expires_at_ms <= $2
    RETURNING holder
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
      AND (picked.id NOT IN (SELECT id FROM keyed)
           OR picked.id::text IN (SELECT holder FROM taken))
    RETURNING j.*
)
SELECT id::text, name, queue, payload::text, idempotency_key, attempts, max_attempts,
       tenant, actor, concurrency_key, run_at_ms, created_at_ms, lease_expires_at_ms,
       id::text IN (SELECT holder FROM taken) AS slot_held
FROM claimed
ORDER BY claimed.priority DESC, claimed.run_at_ms, claimed.id  -- the bigint, not id::text
