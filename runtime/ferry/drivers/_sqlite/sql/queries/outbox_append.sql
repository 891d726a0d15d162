-- Append one entry through the application's connection, inside its transaction: the
-- entry exists exactly when the business write does. Answers its id.
INSERT INTO ferry_outbox (type, payload, created_at_ms)
VALUES (:type, :payload, :now)
RETURNING CAST(id AS TEXT) AS id
