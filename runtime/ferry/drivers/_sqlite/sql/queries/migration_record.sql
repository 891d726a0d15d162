-- Record one applied migration.
INSERT INTO ferry_migrations (version, name, applied_at_ms, checksum)
VALUES (:version, :name, :now, :checksum)
