-- Rate windows whose every start and booking has left the window.
DELETE FROM ferry_rate_windows WHERE expires_at_ms <= :now
