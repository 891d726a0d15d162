-- Runs matching a filter, newest first, paged by id (each parameter NULL: no restriction):
-- :queue, :name, :state, :tenant, created after :created_after / before :created_before,
-- ids below :before_id, at most :limit; :lease_expired keeps only running runs whose
-- lease lapsed by :now. A page is a backward walk of the primary key, never a sort.
-- ORDER BY names ferry_jobs.id: a bare `id` would be the text alias of the result column,
-- SQLite's first choice there, and "999" sorts after "1000".
SELECT CAST(id AS TEXT) AS id, name, queue, state, attempts, max_attempts, tenant, run_at_ms,
       created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM ferry_jobs
WHERE (:queue IS NULL OR queue = :queue)
  AND (:name IS NULL OR name = :name)
  AND (:state IS NULL OR state = :state)
  AND (:tenant IS NULL OR tenant = :tenant)
  AND (:created_after IS NULL OR created_at_ms > :created_after)
  AND (:created_before IS NULL OR created_at_ms < :created_before)
  AND (:before_id IS NULL OR id < :before_id)
  AND (NOT :lease_expired OR (state = 'running' AND lease_expires_at_ms <= :now))
ORDER BY ferry_jobs.id DESC
LIMIT :limit
