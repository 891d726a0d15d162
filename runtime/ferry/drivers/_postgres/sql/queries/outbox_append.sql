-- Append one entry of :type in the caller's transaction: :payload (JSON text) at :now,
-- under the trace context :traceparent (NULL: none).
-- The NOTIFY is part of the statement, so the relay is woken when the transaction commits
-- and never when it rolls back.
WITH appended AS (
    INSERT INTO {schema}.outbox (type, payload, created_at_ms, traceparent)
    VALUES (:type, :payload::text::jsonb, :now, :traceparent)
    RETURNING id
),
notified AS (
    SELECT pg_notify({outbox_channel}, '')
)
SELECT appended.id::text AS id,
       (SELECT count(*) FROM notified) AS notified  -- reading `notified` is what runs it
FROM appended
