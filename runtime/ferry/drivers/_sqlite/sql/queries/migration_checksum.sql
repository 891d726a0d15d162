-- Fill in the checksum of a row recorded without one.
UPDATE ferry_migrations SET checksum = :checksum WHERE version = :version AND checksum IS NULL
