-- Renew the lease of run :id until :lease_until (the fence was checked under the write
-- lock), with the progress reported (NULL: unchanged).
UPDATE ferry_jobs
SET lease_expires_at_ms = :lease_until,
    progress_current = coalesce(:progress_current, progress_current),
    progress_total = coalesce(:progress_total, progress_total),
    updated_at_ms = :now
WHERE id = :id
