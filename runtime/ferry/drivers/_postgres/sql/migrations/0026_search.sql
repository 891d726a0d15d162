-- What the console's lists and searches need to stay one bounded index walk at any size
-- (ferry jobs ls, the dashboard's tabs, the MCP tools).

-- The idempotency key's unique index compares in code point order (COLLATE "C"), so a key
-- prefix search (`ferry jobs ls --key`) is a range of it. Uniqueness is unchanged (equal
-- text is equal under every deterministic collation), ON CONFLICT (idempotency_key) infers
-- it as it did the constraint's index, and no enqueue maintains a second index.
CREATE UNIQUE INDEX jobs_idempotency_key ON {schema}.jobs (idempotency_key COLLATE "C");
ALTER TABLE {schema}.jobs DROP CONSTRAINT jobs_idempotency_key_key;

-- Dead and cancelled runs, newest first: the dead letters and the dead tab. A run gets an
-- entry only when it ends so, never on the hot path.
CREATE INDEX jobs_ended_badly ON {schema}.jobs (id) WHERE state IN ('dead', 'cancelled');

-- Runs whose last attempt left an error, by code: the error-code search and the retrying
-- tab. Runs that never failed have no entry.
CREATE INDEX jobs_errors ON {schema}.jobs (last_error_code, id)
    WHERE last_error_code IS NOT NULL;
