-- Whether the jobs table holds at least $1 runs yet has never been analyzed: a fresh
-- database that got a backlog before autovacuum came round. Without statistics the planner
-- guesses the claim's partial index holds a handful of rows and sorts the whole due
-- backlog on every claim (measured: tens of ms a claim at 20k runs) instead of walking the
-- index in claim order and stopping after `limit` rows.
SELECT coalesce(
    (SELECT last_analyze IS NULL AND last_autoanalyze IS NULL AND n_live_tup >= $1
     FROM pg_stat_user_tables
     WHERE relid = '{schema}.jobs'::regclass),
    false
)
