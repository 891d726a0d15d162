-- Lapse lease $1 if holder $2 has it; the row (and its term) stays for the next taker.
UPDATE {schema}.leases SET expires_at_ms = 0 WHERE name = $1 AND holder = $2
