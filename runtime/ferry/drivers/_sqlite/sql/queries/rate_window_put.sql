-- Store one key's rate window as a claim left it; it expires once its latest start or
-- booking has left the window.
INSERT INTO ferry_rate_windows (key, starts, booked, expires_at_ms)
VALUES (:key, :starts, :booked, :expires_at_ms)
ON CONFLICT (key) DO UPDATE
SET starts = excluded.starts, booked = excluded.booked, expires_at_ms = excluded.expires_at_ms
