-- Runs matching a filter, newest first, paged by id (each parameter NULL: no restriction):
-- :queue, :name, :state, :tenant, created after :created_after / before :created_before,
-- ids below :before_id, at most :limit; :lease_expired keeps only running runs whose
-- lease lapsed by :now. The search words: ids above :after_id (a search window's floor),
-- idempotency keys from :key_from up to (not including) :key_below — a prefix and its
-- upper bound, compared as code points, which the key's C-collated unique index serves —,
-- :error_code, :error_text its last error message holds (ASCII letters in either case),
-- :input_contains (JSON the input contains), due after :due_after, with or without a last
-- error (:has_error).
-- Paged by the primary key, newest first: a page is a backward walk of the id index that
-- stops after :limit matches (a rare filter walks further, a search only through its
-- window), never a sort of the whole table; dead, cancelled and erring runs have partial
-- indexes.
SELECT id::text, name, queue, state, attempts, max_attempts, tenant, run_at_ms,
       created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM {schema}.jobs AS j
WHERE (:queue::text IS NULL OR queue = :queue)
  AND (:name::text IS NULL OR name = :name)
  AND (:state::text IS NULL OR state = :state)
  AND (:tenant::text IS NULL OR tenant = :tenant)
  AND (:created_after::bigint IS NULL OR created_at_ms > :created_after)
  AND (:created_before::bigint IS NULL OR created_at_ms < :created_before)
  AND (:before_id::bigint IS NULL OR id < :before_id)
  AND (NOT :lease_expired::boolean OR (state = 'running' AND lease_expires_at_ms <= :now))
  AND (:after_id::bigint IS NULL OR id > :after_id)
  AND (:key_from::text IS NULL OR idempotency_key COLLATE "C" >= :key_from)
  AND (:key_below::text IS NULL OR idempotency_key COLLATE "C" < :key_below)
  AND (:error_code::text IS NULL OR last_error_code = :error_code)
  AND (:error_text::text IS NULL
       OR strpos(lower(last_error_message COLLATE "C"), lower(:error_text COLLATE "C")) > 0)
  AND (:input_contains::jsonb IS NULL OR payload @> :input_contains)
  AND (:due_after::bigint IS NULL OR run_at_ms > :due_after)
  AND (:has_error::boolean IS NULL OR (last_error_code IS NOT NULL) = :has_error)
ORDER BY j.id DESC  -- the bigint, not id::text
LIMIT :limit
