-- A fragment both claims lease with (settle_and_claim and settle_and_keyed_claim include
-- it in their `claimed` part, which may add conditions and then `RETURNING j.*`): each
-- picked run goes running under worker $17's lease until $19, counting an attempt.
UPDATE {schema}.jobs AS j
    SET state = 'running',
        attempts = j.attempts + 1,
        locked_by = $17,
        lease_expires_at_ms = $19,
        updated_at_ms = $13
    FROM picked
    WHERE j.id = picked.id
