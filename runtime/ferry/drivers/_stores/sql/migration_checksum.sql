-- Fill in the checksum of migration :version, recorded before checksums were.
UPDATE {schema}.migrations SET checksum = :checksum WHERE version = :version AND checksum IS NULL
