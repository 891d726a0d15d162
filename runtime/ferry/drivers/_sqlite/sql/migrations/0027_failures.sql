-- The records of a run's failed attempts (code, instant, traceback), the newest 16 kB of
-- them: each failed attempt's settle appends one and keeps the tail (ferry.drivers.failures).
ALTER TABLE ferry_jobs ADD COLUMN failures TEXT;
