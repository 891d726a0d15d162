-- Append one entry in the caller's transaction: $1 type, $2 payload (JSON text), $3 now,
-- $4 the trace context it was appended under (NULL: none).
-- The NOTIFY is part of the statement, so the relay is woken when the transaction commits
-- and never when it rolls back.
WITH appended AS (
    INSERT INTO {schema}.outbox (type, payload, created_at_ms, traceparent)
    VALUES ($1, $2::text::jsonb, $3, $4)
    RETURNING id
),
notified AS (
    SELECT pg_notify({outbox_channel}, '')
)
SELECT appended.id::text AS id,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM appended
