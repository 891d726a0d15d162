-- The records of a run's failed attempts (code, instant, traceback), the newest 16 kB of
-- them: each failed attempt's settle appends one and keeps the tail (ferry.drivers.failures).
ALTER TABLE {schema}.jobs ADD COLUMN failures text;
COMMENT ON COLUMN {schema}.jobs.failures IS 'Records of the failed attempts (attempt, code, instant, traceback), newest 16 kB.';
