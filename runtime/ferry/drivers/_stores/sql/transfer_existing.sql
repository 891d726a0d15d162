-- The runs holding the keys :keys that transfer_import skipped, with what judges whether
-- each is the moved run itself (its identity fields, and whether it is `moving` off this
-- store: then it is not).
SELECT CAST(id AS TEXT) AS id, idempotency_key, state, name, queue, payload, created_at_ms
FROM {schema}.jobs
WHERE idempotency_key = ANY(:keys)
