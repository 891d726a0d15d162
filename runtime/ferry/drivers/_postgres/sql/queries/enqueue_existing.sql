-- The runs already holding keys $1 (those enqueue skipped). A statement of its own: its
-- snapshot also sees a key another transaction committed while the insert ran.
SELECT idempotency_key, id::text AS id
FROM {schema}.jobs
WHERE idempotency_key = ANY ($1::text[])
