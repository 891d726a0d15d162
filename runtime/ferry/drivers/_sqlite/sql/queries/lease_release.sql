-- Lapse lease :name if :holder has it; the row (and its term) stays for the next taker.
UPDATE ferry_leases SET expires_at_ms = 0 WHERE name = :name AND holder = :holder
