-- A run the claim just leased whose rate limit had no room: back to queued, due at
-- :until, its lease and the attempt the claim counted given back (it never started).
UPDATE ferry_jobs
SET state = 'queued',
    attempts = attempts - 1,
    locked_by = NULL,
    lease_expires_at_ms = NULL,
    run_at_ms = :until,
    rate_deferred_until_ms = :until,
    updated_at_ms = :now
WHERE id = :id
