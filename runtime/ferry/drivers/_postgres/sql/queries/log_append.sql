-- Add $3 to the log of ($1, $2), stamped $4.
INSERT INTO {schema}.record_log (space, key, value, at_ms) VALUES ($1, $2, $3::text::jsonb, $4)
