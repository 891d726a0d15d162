-- What the console's lists and searches need to stay one bounded index walk at any size.
-- (A key prefix search is a range of the idempotency key's unique index, which compares
-- in code point order already: SQLite's BINARY collation of UTF-8.)

-- Dead and cancelled runs, newest first: the dead letters and the dead tab.
CREATE INDEX ferry_jobs_ended_badly ON ferry_jobs (id) WHERE state IN ('dead', 'cancelled');

-- Runs whose last attempt left an error, by code: the error-code search and the retrying
-- tab. Runs that never failed have no entry.
CREATE INDEX ferry_jobs_errors ON ferry_jobs (last_error_code, id)
    WHERE last_error_code IS NOT NULL;
