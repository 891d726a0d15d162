-- Planner statistics for the jobs table (see jobs_never_analyzed).
ANALYZE {schema}.jobs
