-- A fragment both claims lease with (settle_and_claim and settle_and_keyed_claim include it
-- in their `claimed` part, which may add conditions and then returns the columns _answer
-- reads): each picked run goes running under worker $5's lease until $7, counting an
-- attempt. A ready row is a hint (migration 0029): the run is leased only if `jobs` still
-- has it queued or sleeping at the instant the row was written for — a run cancelled or
-- reserved since, or made due at another instant (which wrote a row of its own), is not.
-- The update waits for a row another transaction holds and tests its newest version.
UPDATE {schema}.jobs AS j
    SET state = 'running',
        attempts = j.attempts + 1,
        locked_by = $5,
        lease_expires_at_ms = $7,
        updated_at_ms = $2
    FROM picked
    WHERE j.id = picked.id
      AND j.state IN ('queued', 'sleeping')
      AND j.run_at_ms = picked.run_at_ms
