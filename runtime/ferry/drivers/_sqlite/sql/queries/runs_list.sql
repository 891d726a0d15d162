-- Runs matching a filter, newest first, paged by id (each parameter NULL: no restriction):
-- :queue, :name, :state, :tenant, created after :created_after / before :created_before,
-- ids below :before_id, at most :limit; :lease_expired keeps only running runs whose
-- lease lapsed by :now. The search words: ids above :after_id (a search window's floor),
-- idempotency keys from :key_from up to (not including) :key_below — a prefix and its
-- upper bound, a range of the key's unique index —, :error_code, :error_text its last error
-- message holds (ASCII letters in either case: SQLite's lower()), :input_contains (JSON
-- the input contains, by jsonb's rules: ferry_json_contains), due after :due_after, with
-- or without a last error (:has_error 1/0). A page is a backward walk of the primary key,
-- never a sort.
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
  AND (:after_id IS NULL OR id > :after_id)
  AND (:key_from IS NULL OR idempotency_key >= :key_from)
  AND (:key_below IS NULL OR idempotency_key < :key_below)
  AND (:error_code IS NULL OR last_error_code = :error_code)
  AND (:error_text IS NULL OR instr(lower(last_error_message), lower(:error_text)) > 0)
  AND (:input_contains IS NULL OR ferry_json_contains(payload, :input_contains))
  AND (:due_after IS NULL OR run_at_ms > :due_after)
  AND (:has_error IS NULL OR (last_error_code IS NOT NULL) = :has_error)
ORDER BY ferry_jobs.id DESC
LIMIT :limit
