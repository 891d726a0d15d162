-- Before an enqueue writes its runs: the runs holding keys of :batch that fall outside the
-- enqueue's dedupe rule give their key up, so the write that follows (in the same
-- transaction) takes it. :batch is a JSON array of objects, one per request with a rule
-- other than "retained": its key, active_only (dedupe only against unfinished runs) and
-- window_ms (only against runs created less than this many ms before :now; null: no
-- window). The run keeps its row; its key becomes `<key> [superseded: run <id>]` padded
-- with spaces to :bytes bytes, one more than an enqueued key may have: no enqueue can
-- take it, and it is unique per run.
UPDATE ferry_jobs
SET idempotency_key = printf('%-*s', :bytes, idempotency_key || ' [superseded: run ' || id || ']')
WHERE id IN (
    SELECT j.id
    FROM json_each(:batch) AS r
    JOIN ferry_jobs AS j ON j.idempotency_key = json_extract(r.value, '$.key')
    WHERE (json_extract(r.value, '$.active_only') AND j.state IN ('completed', 'dead', 'cancelled'))
       OR j.created_at_ms <= :now - json_extract(r.value, '$.window_ms')
)
