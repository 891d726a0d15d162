-- Record migration :version (:name) as applied at :now, with the checksum of its file.
INSERT INTO {schema}.migrations (version, name, applied_at_ms, checksum)
VALUES (:version, :name, :now, :checksum)
