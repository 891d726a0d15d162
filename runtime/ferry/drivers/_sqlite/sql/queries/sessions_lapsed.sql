-- Forget revocations that lapsed by :now (other than :session's): the table never
-- outgrows one session lifetime.
DELETE FROM ferry_admin_revoked_sessions WHERE expires_at_ms <= :now AND session <> :session
