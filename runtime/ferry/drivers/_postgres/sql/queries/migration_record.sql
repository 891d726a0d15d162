-- Record one applied migration ($1 version, $2 name, $3 now, $4 checksum of its file).
INSERT INTO {schema}.migrations (version, name, applied_at_ms, checksum) VALUES ($1, $2, $3, $4)
