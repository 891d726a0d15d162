-- Store :value under (:space, :key), expiring at :expires_at_ms (null: never), at :now —
-- if the fence holds: lease :lease_name still held by :lease_holder in term :lease_term at
-- :now (when :lease_name is not null), and run :run_id still held by :worker_id at :now
-- (when :worker_id is not null). Answers a row when it landed; the check and the write
-- are one statement under the file's write lock.
INSERT INTO ferry_records (space, key, value, expires_at_ms, updated_at_ms)
SELECT :space, :key, :value, :expires_at_ms, :now
WHERE (:lease_name IS NULL OR EXISTS (
        SELECT 1 FROM ferry_leases
        WHERE name = :lease_name AND holder = :lease_holder AND term = :lease_term
          AND expires_at_ms > :now))
  AND (:worker_id IS NULL OR EXISTS (
        SELECT 1 FROM ferry_jobs
        WHERE id = :run_id AND state = 'running' AND locked_by = :worker_id
          AND lease_expires_at_ms > :now))
ON CONFLICT (space, key) DO UPDATE SET value = excluded.value,
    expires_at_ms = excluded.expires_at_ms, updated_at_ms = excluded.updated_at_ms
RETURNING 1 AS landed
