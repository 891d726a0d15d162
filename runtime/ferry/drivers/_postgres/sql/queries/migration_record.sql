-- Record one applied migration ($1 version, $2 name, $3 now).
INSERT INTO {schema}.migrations (version, name, applied_at_ms) VALUES ($1, $2, $3)
