-- Runs matching a filter, newest first, paged by id: $1 queue, $2 name, $3 state, $4 tenant,
-- $5 created after, $6 created before, $7 before id (each NULL: no restriction), $8 limit;
-- $9 true keeps only running runs whose lease lapsed before $10 (now). The search words:
-- $11 ids above (a search window's floor), idempotency keys from $12 up to (not
-- including) $13 — a prefix and its upper bound, compared as code points, which the key's
-- C-collated unique index serves —, $14 the last error's code, $15 text its message holds
-- (ASCII letters in either case), $16 JSON the input contains, $17 due after, $18 with or
-- without a last error.
-- Paged by the primary key, newest first: a page is a backward walk of the id index that
-- stops after $8 matches (a rare filter walks further, a search only through its window),
-- never a sort of the whole table; dead, cancelled and erring runs have partial indexes.
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
  AND ($11::bigint IS NULL OR id > $11)
  AND ($12::text IS NULL OR idempotency_key COLLATE "C" >= $12)
  AND ($13::text IS NULL OR idempotency_key COLLATE "C" < $13)
  AND ($14::text IS NULL OR last_error_code = $14)
  AND ($15::text IS NULL
       OR strpos(lower(last_error_message COLLATE "C"), lower($15 COLLATE "C")) > 0)
  AND ($16::jsonb IS NULL OR payload @> $16)
  AND ($17::bigint IS NULL OR run_at_ms > $17)
  AND ($18::boolean IS NULL OR (last_error_code IS NOT NULL) = $18)
ORDER BY j.id DESC  -- the bigint, not id::text
LIMIT $8
