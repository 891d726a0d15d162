-- Record one delivery attempt (webhook_streak moves the endpoint's streak in the same
-- transaction).
INSERT INTO ferry_webhook_attempts (
    webhook, endpoint_id, event_id, message_id, job_id, attempt, outcome,
    status, code, message, duration_ms, at_ms
)
VALUES (:webhook, :endpoint_id, :event_id, :message_id, :job_id, :attempt, :outcome,
        :status, :code, :message, :duration_ms, :at_ms)
