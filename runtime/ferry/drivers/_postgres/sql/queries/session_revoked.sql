-- Whether dashboard session $1 is revoked and its revocation has not lapsed by $2 (now).
SELECT EXISTS (
    SELECT 1 FROM {schema}.admin_revoked_sessions WHERE session = $1 AND expires_at_ms > $2
)
