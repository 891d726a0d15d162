-- Fill in the checksum of a row recorded before checksums were ($1 version, $2 checksum).
UPDATE {schema}.migrations SET checksum = $2 WHERE version = $1 AND checksum IS NULL
