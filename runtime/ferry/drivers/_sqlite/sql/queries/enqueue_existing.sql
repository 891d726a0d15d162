-- The runs already holding the keys of :keys (a JSON array): those enqueue skipped.
SELECT CAST(id AS TEXT) AS id, idempotency_key
FROM ferry_jobs
WHERE idempotency_key IN (SELECT value FROM json_each(:keys))
