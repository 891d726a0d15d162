-- Rate limits (ferry.drivers.rates). Each run of a rated job keeps the key its starts
-- count under and the instant a claim last deferred it to; each key keeps its window in
-- one row: the last `limit` start instants and projected starts, ascending. The claim
-- applies the rule through rate_take, which locks the key's row, so concurrent claimers
-- of one key take turns and each sees the starts of the one before it.
ALTER TABLE {schema}.jobs ADD COLUMN rate_key text, ADD COLUMN rate_deferred_until_ms bigint;

CREATE TABLE {schema}.rate_windows (
    key           text     PRIMARY KEY,
    starts        bigint[] NOT NULL,
    booked        bigint[] NOT NULL,
    expires_at_ms bigint   NOT NULL
);
CREATE INDEX rate_windows_expiry ON {schema}.rate_windows (expires_at_ms);

-- The rule of ferry.drivers.rates.take, for the runs of one key a claim picked: p_booked
-- holds, in claim order, whether each was deferred before. Answers how many of them start
-- now (the first ones) and the instant each of the others is deferred to. Each statement
-- of a volatile function reads the latest committed rows, and FOR UPDATE holds the key's
-- row until the claim commits: the check and the write are one step fleet-wide.
CREATE FUNCTION {schema}.rate_take(
    p_key text, p_limit integer, p_per_ms bigint, p_now_ms bigint, p_booked boolean[],
    OUT admitted integer, OUT hints bigint[]
) LANGUAGE plpgsql AS $$
DECLARE
    floor_ms constant bigint := p_now_ms - p_per_ms;
    wanted constant integer := cardinality(p_booked);
    v_starts bigint[];
    v_booked bigint[];
    due bigint;
BEGIN
    INSERT INTO {schema}.rate_windows (key, starts, booked, expires_at_ms)
    VALUES (p_key, '{}', '{}', 0)
    ON CONFLICT (key) DO NOTHING;
    SELECT w.starts, w.booked INTO v_starts, v_booked
    FROM {schema}.rate_windows AS w WHERE w.key = p_key FOR UPDATE;
    v_starts := ARRAY(SELECT s FROM unnest(v_starts) AS s WHERE s > floor_ms ORDER BY s);
    v_booked := ARRAY(SELECT b FROM unnest(v_booked) AS b WHERE b > floor_ms);
    admitted := least(wanted, p_limit - cardinality(v_starts));
    FOR n IN 1 .. admitted LOOP
        v_starts := v_starts || p_now_ms;
        IF NOT p_booked[n] THEN
            v_booked := v_booked || p_now_ms;
        END IF;
    END LOOP;
    v_booked := ARRAY(SELECT b FROM unnest(v_booked) AS b ORDER BY b);
    hints := '{}';
    FOR n IN 0 .. wanted - admitted - 1 LOOP
        -- Never before the log of real starts has room, nor before the bookings ahead of
        -- it have had their turn.
        due := v_starts[n % p_limit + 1] + p_per_ms * (1 + n / p_limit);
        IF cardinality(v_booked) >= p_limit THEN
            due := greatest(due, v_booked[cardinality(v_booked) - p_limit + 1] + p_per_ms);
        END IF;
        hints := hints || due;
        v_booked := ARRAY(SELECT b FROM unnest(v_booked || due) AS b ORDER BY b);
        v_booked := v_booked[greatest(cardinality(v_booked) - p_limit + 1, 1):];
    END LOOP;
    v_booked := v_booked[greatest(cardinality(v_booked) - p_limit + 1, 1):];
    UPDATE {schema}.rate_windows
    SET starts = v_starts, booked = v_booked,
        expires_at_ms = coalesce(greatest(v_starts[cardinality(v_starts)],
                                          v_booked[cardinality(v_booked)]), p_now_ms) + p_per_ms
    WHERE key = p_key;
END
$$;

COMMENT ON COLUMN {schema}.jobs.rate_key IS 'The key this run''s starts count under when its job declares a RateLimit.';
COMMENT ON COLUMN {schema}.jobs.rate_deferred_until_ms IS 'The instant a claim last deferred this run to because its rate limit had no room.';
COMMENT ON TABLE {schema}.rate_windows IS 'Each rate key''s window: its last start instants and projected starts (ferry.drivers.rates).';
