-- Whether dashboard session :session is revoked and its revocation has not lapsed by :now.
SELECT EXISTS (
    SELECT 1 FROM ferry_admin_revoked_sessions WHERE session = :session AND expires_at_ms > :now
)
