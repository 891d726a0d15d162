-- Rate limits (ferry.drivers.rates): each run of a rated job keeps the key its starts count
-- under, and the instant a claim last deferred it to; each key keeps its window — the last
-- `limit` start instants and projected starts, as JSON arrays — until prune finds every
-- one of them out of the window (`expires_at_ms`).
ALTER TABLE ferry_jobs ADD COLUMN rate_key TEXT;
ALTER TABLE ferry_jobs ADD COLUMN rate_deferred_until_ms INTEGER;

CREATE TABLE ferry_rate_windows (
    key           TEXT    PRIMARY KEY,
    starts        TEXT    NOT NULL,
    booked        TEXT    NOT NULL,
    expires_at_ms INTEGER NOT NULL
) STRICT;
CREATE INDEX ferry_rate_windows_expiry ON ferry_rate_windows (expires_at_ms);
