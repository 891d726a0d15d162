-- Revoke dashboard session $1 until $2 (when its cookie expires anyway), and drop the
-- revocations that lapsed before $3 (now): the table never outgrows one session lifetime.
WITH lapsed AS (
    DELETE FROM {schema}.admin_revoked_sessions WHERE expires_at_ms <= $3 AND session <> $1
)
INSERT INTO {schema}.admin_revoked_sessions (session, expires_at_ms) VALUES ($1, $2)
ON CONFLICT (session) DO UPDATE SET expires_at_ms = greatest(
    {schema}.admin_revoked_sessions.expires_at_ms, EXCLUDED.expires_at_ms)
