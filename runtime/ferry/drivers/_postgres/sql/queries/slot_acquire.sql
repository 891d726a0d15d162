-- Take one of $3 slots of key $1 for holder $2 until $5 ($4 is now).
-- Slots are rows numbered 0..limit-1 under PRIMARY KEY (key, slot), so two acquirers can
-- never both hold slot n: the loser's INSERT conflicts and its DO UPDATE only replaces an
-- expired holder. Answers `acquired`, and `contended` when a free-looking slot was taken
-- by a concurrent acquirer first (the caller tries again: another slot may be free).
WITH mine AS (
    -- Re-acquiring a slot this holder already has is idempotent: it only extends it.
    UPDATE {schema}.lease_slots
    SET expires_at_ms = $5
    WHERE key = $1 AND holder = $2 AND expires_at_ms > $4
    RETURNING slot
),
live AS (
    SELECT slot FROM {schema}.lease_slots WHERE key = $1 AND expires_at_ms > $4
),
candidate AS (
    SELECT n AS slot
    FROM generate_series(0, $3::integer - 1) AS n
    WHERE NOT EXISTS (SELECT FROM mine)
      -- Counting every live holder (not only slots below the limit) keeps a lowered limit.
      AND (SELECT count(*) FROM live) < $3::integer
      AND n NOT IN (SELECT slot FROM live)
    ORDER BY random()  -- contenders spread over the free slots instead of all racing for one
    LIMIT 1
),
taken AS (
    INSERT INTO {schema}.lease_slots AS s (key, slot, holder, expires_at_ms)
    SELECT $1, slot, $2, $5 FROM candidate
    ON CONFLICT (key, slot) DO UPDATE
    SET holder = excluded.holder, expires_at_ms = excluded.expires_at_ms
    WHERE s.expires_at_ms <= $4
    RETURNING slot
)
SELECT EXISTS (SELECT FROM mine) OR EXISTS (SELECT FROM taken) AS acquired,
       EXISTS (SELECT FROM candidate) AND NOT EXISTS (SELECT FROM taken) AS contended
