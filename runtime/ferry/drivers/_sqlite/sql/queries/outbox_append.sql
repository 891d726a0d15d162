-- Append one entry through the application's connection, inside its transaction: the
-- entry exists exactly when the business write does (with the trace context it was
-- appended under, :traceparent). Answers its id.
INSERT INTO ferry_outbox (type, payload, created_at_ms, traceparent)
VALUES (:type, :payload, :now, :traceparent)
RETURNING CAST(id AS TEXT) AS id
