-- Revoke dashboard session :session until :until (when its cookie expires anyway); a
-- repeat keeps the later instant.
INSERT INTO ferry_admin_revoked_sessions (session, expires_at_ms) VALUES (:session, :until)
ON CONFLICT (session) DO UPDATE
SET expires_at_ms = max(expires_at_ms, excluded.expires_at_ms)
