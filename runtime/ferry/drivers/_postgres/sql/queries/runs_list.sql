-- Runs matching a filter, newest first, paged by id: $1 queue, $2 name, $3 state, $4 tenant,
-- $5 created after, $6 created before, $7 before id (each NULL: no restriction), $8 limit;
-- $9 true keeps only running runs whose lease lapsed before $10 (now).
-- Paged by the primary key, newest first: a page is a backward walk of the id index that
-- stops after $8 matches (a rare filter walks further), never a sort of the whole table.
SELECT id::text, name, queue, state, attempts, max_attempts, tenant, run_at_ms,
       created_at_ms, updated_at_ms, last_error_code, last_error_message
FROM {schema}.jobs AS j
WHERE ($1::text IS NULL OR queue = $1)
  AND ($2::text IS NULL OR name = $2)
  AND ($3::text IS NULL OR state = $3)
  AND ($4::text IS NULL OR tenant = $4)
  AND ($5::bigint IS NULL OR created_at_ms > $5)
  AND ($6::bigint IS NULL OR created_at_ms < $6)
  AND ($7::bigint IS NULL OR id < $7)
  AND (NOT $9::boolean OR (state = 'running' AND lease_expires_at_ms <= $10))
ORDER BY j.id DESC  -- the bigint, not id::text
LIMIT $8
