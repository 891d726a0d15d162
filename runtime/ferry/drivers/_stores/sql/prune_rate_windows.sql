-- Delete the rate windows whose every start and booking left the window by :before, all
-- at once (:batch is not needed: a window is one small row); a row per window deleted.
DELETE FROM {schema}.rate_windows WHERE expires_at_ms <= :before RETURNING 1
