-- What the dashboard's charts and sign-out need.
--
-- Dead runs by when they died: the failure series and the recent-latency list read the
-- dead runs of the last hour through this, as they read completed runs through
-- jobs_prune_order, so neither ever scans the table (dead runs are few, so it costs little).
CREATE INDEX jobs_dead_order ON {schema}.jobs (finished_at_ms) WHERE state = 'dead';

-- Signed-out dashboard sessions. A session cookie is signed, so without this row a copy of
-- it stays valid until it expires; every dashboard replica reads the same table, so a
-- sign-out holds fleet-wide at once. A row lapses with the cookie it revokes and is
-- deleted by the next sign-out, so the table holds at most a session lifetime of them.
CREATE TABLE {schema}.admin_revoked_sessions (
    session       text   PRIMARY KEY,
    expires_at_ms bigint NOT NULL
);

COMMENT ON TABLE {schema}.admin_revoked_sessions IS 'Dashboard sessions signed out before their cookie expired; refused until expires_at_ms.';
