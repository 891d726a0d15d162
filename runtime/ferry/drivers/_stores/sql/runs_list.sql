-- Runs matching a filter, newest first, paged by id (each parameter NULL: no restriction):
-- :queue, :name, :state, :tenant, created after :created_after / before :created_before,
-- ids below :before_id, at most :limit; :lease_expired keeps only running runs whose
-- lease lapsed by :now.
-- A page is a backward walk of the primary key that stops after :limit matches (a rare
-- filter walks further), never a sort of the whole table. A parameter tested for NULL is
-- CAST: Postgres must know its type there (SQLite takes it as it is bound).
SELECT CAST(j.id AS TEXT) AS id, name, queue, state, attempts, max_attempts, tenant,
       run_at_ms, created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM {schema}.jobs AS j
WHERE (CAST(:queue AS TEXT) IS NULL OR queue = :queue)
  AND (CAST(:name AS TEXT) IS NULL OR name = :name)
  AND (CAST(:state AS TEXT) IS NULL OR state = :state)
  AND (CAST(:tenant AS TEXT) IS NULL OR tenant = :tenant)
  AND (CAST(:created_after AS BIGINT) IS NULL OR created_at_ms > :created_after)
  AND (CAST(:created_before AS BIGINT) IS NULL OR created_at_ms < :created_before)
  AND (CAST(:before_id AS BIGINT) IS NULL OR j.id < :before_id)
  AND (NOT CAST(:lease_expired AS BOOLEAN)
       OR (state = 'running' AND lease_expires_at_ms <= :now))
ORDER BY j.id DESC  -- the integer: a bare `id` is the text it is answered as
LIMIT :limit
