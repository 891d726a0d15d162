-- Runs matching a filter, newest first, paged by id (each parameter NULL: no restriction):
-- :queue, :name, :state, :tenant, created after :created_after / before :created_before,
-- ids below :before_id, at most :limit; :lease_expired keeps only running runs whose
-- lease lapsed by :now.
-- A page is a backward walk of the primary key that stops after :limit matches (a rare
-- filter walks further), never a sort of the whole table.
SELECT j.id::text, name, queue, state, attempts, max_attempts, tenant,
       run_at_ms, created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM {schema}.jobs AS j
WHERE (:queue::text IS NULL OR queue = :queue)
  AND (:name::text IS NULL OR name = :name)
  AND (:state::text IS NULL OR state = :state)
  AND (:tenant::text IS NULL OR tenant = :tenant)
  AND (:created_after::bigint IS NULL OR created_at_ms > :created_after)
  AND (:created_before::bigint IS NULL OR created_at_ms < :created_before)
  AND (:before_id::bigint IS NULL OR j.id < :before_id)
  AND (NOT :lease_expired::boolean OR (state = 'running' AND lease_expires_at_ms <= :now))
ORDER BY j.id DESC  -- the integer, not the text it is answered as
LIMIT :limit
