-- A fragment both claims lease with (settle_and_claim and settle_and_keyed_claim include
-- it in their `claimed` part, which may add conditions and then returns the columns
-- _answer reads): each picked run goes running under worker $5's lease until $7,
-- counting an attempt.
UPDATE {schema}.jobs AS j
    SET state = 'running',
        attempts = j.attempts + 1,
        locked_by = $5,
        lease_expires_at_ms = $7,
        updated_at_ms = $2
    FROM picked
    WHERE j.id = picked.id
